package context

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Node names (DECISIONS.md "Node names"): every node is <prefix>-<VMID>.
// The VM ID is unique per oned and survives `onevm recover --recreate`, and
// the last '-' separates it from the prefix, so two VMs can never derive
// the same name. The image's hostname plays no part: every VM of an image
// has the same one.

// MaxNodePrefix keeps <prefix>-<VMID> inside one 63-character DNS label.
const MaxNodePrefix = 40

// defaultNodePrefix is the prefix when ROLE_NAME makes no DNS label.
const defaultNodePrefix = "node"

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// CheckNodePrefix accepts ONEAPP_K8S_NODENAME: a DNS-1123 label of at most
// MaxNodePrefix characters.
func CheckNodePrefix(p string) error {
	switch {
	case len(p) > MaxNodePrefix:
		return fmt.Errorf("%q is %d characters; a node name prefix has at most %d (the name is <prefix>-<VM ID>)", p, len(p), MaxNodePrefix)
	case !dnsLabel.MatchString(p):
		return fmt.Errorf("%q is not a node name prefix: lower-case letters, digits and '-', starting and ending with a letter or digit (the name is <prefix>-<VM ID>)", p)
	}
	return nil
}

// NodeName is the node name of VM vmid: prefix (ONEAPP_K8S_NODENAME) when
// set, else the role name lower-cased with '_' as '-', else "node".
func NodeName(prefix, roleName string, vmid int) string {
	if prefix == "" {
		prefix = strings.ReplaceAll(strings.ToLower(roleName), "_", "-")
		if CheckNodePrefix(prefix) != nil {
			prefix = defaultNodePrefix
		}
	}
	return prefix + "-" + strconv.Itoa(vmid)
}
