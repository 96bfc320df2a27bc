package kubeconfig

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Roles a kubeconfig can carry. Each binds, per user, to the Kubernetes
// ClusterRole of the same name (view through onekube:view, which adds
// read access to cluster-scoped objects such as Nodes).
const (
	RoleClusterAdmin = "cluster-admin"
	RoleView         = "view"
)

// Roles lists the roles in the order the CLI shows them.
var Roles = []string{RoleClusterAdmin, RoleView}

// Validity bounds of a certificate. Certificates cannot be revoked, which
// is why they are short: a day by default, a week at most. A minute is the
// shortest that survives the round trip through OneGate.
const (
	DefaultTTL = 24 * time.Hour
	MinTTL     = time.Minute
	MaxTTL     = 7 * 24 * time.Hour
)

// ErrBadName: a user name the certificate, group and binding cannot carry.
var ErrBadName = errors.New("bad user name")

// maxName bounds a user name: it becomes the certificate's CN (at most 64
// characters in X.509) and part of a ClusterRoleBinding name.
const maxName = 64

// CheckName accepts a user name: letters, digits and . _ @ -, starting and
// ending with a letter or digit (OpenNebula user names, e-mail-like LDAP
// names). No ':' (it separates the parts of group and binding names) and
// nothing starting with "system" or "kube", which Kubernetes and kubeadm
// use for their own identities.
func CheckName(name string) error {
	if name == "" || len(name) > maxName {
		return fmt.Errorf("%w: want 1 to %d characters", ErrBadName, maxName)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if alnum || (i > 0 && i < len(name)-1 && (c == '.' || c == '_' || c == '@' || c == '-')) {
			continue
		}
		return fmt.Errorf("%w %q: only letters, digits and . _ @ - (not first or last)", ErrBadName, name)
	}
	low := strings.ToLower(name)
	if strings.HasPrefix(low, "system") || strings.HasPrefix(low, "kube") {
		return fmt.Errorf("%w %q: names starting with system or kube are Kubernetes' own", ErrBadName, name)
	}
	return nil
}

// CheckRole accepts one of Roles.
func CheckRole(role string) error {
	for _, r := range Roles {
		if role == r {
			return nil
		}
	}
	return fmt.Errorf("unknown role %q (want %s)", role, strings.Join(Roles, " or "))
}

// rank orders the roles by what they grant.
func rank(role string) int {
	switch role {
	case RoleView:
		return 1
	case RoleClusterAdmin:
		return 2
	}
	return 0
}

// Allows reports whether an entry whose maximum role is max may get role.
func Allows(max, role string) bool { return rank(role) > 0 && rank(role) <= rank(max) }

// DefaultMaxRole is the maximum role of an authorized entry that names
// none (name:recipient): the least one. Granting cluster-admin takes the
// owner's explicit word (name:recipient:cluster-admin), which flow
// writes for the owner's own entry.
const DefaultMaxRole = RoleView

// Backdate is how far before the master's now a certificate starts:
// kubeadm's CertificateBackdate (cmd/kubeadm/app/constants, v1.36.3), as
// masters' and API servers' clocks may differ a little.
const Backdate = 5 * time.Minute

// ClockSkew is how far the CLI's clock and a master's may differ before
// the CLI calls a certificate's validity not the one it asked for.
const ClockSkew = 5 * time.Minute

// CheckTTL accepts a validity within the bounds.
func CheckTTL(d time.Duration) error {
	if d < MinTTL || d > MaxTTL {
		return fmt.Errorf("validity %s is outside %s..%s", d, MinTTL, formatDays(MaxTTL))
	}
	return nil
}

func formatDays(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}

// Group is the certificate's only group for name and role, and the name
// of the ClusterRoleBinding that gives it the role. One group per user and
// role means deleting one binding revokes exactly that user's certificates
// of that role, and a view certificate never inherits an admin binding of
// the same user (RBAC would match a User subject for both).
func Group(name, role string) string { return "onekube:" + name + ":" + role }
