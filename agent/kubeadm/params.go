package kubeadm

import (
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	vmcontext "github.com/onekube/onekube/context"
)

// Checks shared by init and join parameters. Each names the field at fault so
// a bad template value is found from the agent's error alone.

// checkKubernetesVersion requires a full release ("v1.36.3", "1.36.3",
// "v1.37.0-rc.1"): kubeadm reads a bare "1.36" as a release label to look up
// online, which a VM without internet cannot do. It returns the version with
// a "v" prefix, the spelling kubeadm prints.
func checkKubernetesVersion(s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("%w: KubernetesVersion is empty (resolve it with `kubeadm version -o short`)", ErrParams)
	}
	v, err := parseVersion(s)
	if err != nil {
		return "", err
	}
	if !v.hasPatch {
		return "", fmt.Errorf("%w: KubernetesVersion %q needs a patch release, e.g. v1.%d.0", ErrParams, s, v.minor)
	}
	return "v" + strings.TrimPrefix(s, "v"), nil
}

// checkNodeName applies the Node object's naming rule (a DNS-1123 subdomain),
// which kubeadm enforces too; hostnames with capitals fail here, not midway
// through init.
func checkNodeName(s string) error {
	if s == "" {
		return fmt.Errorf("%w: NodeName is empty", ErrParams)
	}
	if len(s) > 253 {
		return fmt.Errorf("%w: NodeName is %d characters, at most 253 allowed", ErrParams, len(s))
	}
	for _, label := range strings.Split(s, ".") {
		if !dnsLabel(label) {
			return fmt.Errorf("%w: NodeName %q is not a lowercase DNS name (a-z, 0-9, '-', '.')", ErrParams, s)
		}
	}
	return nil
}

func dnsLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// checkAddr requires a concrete unicast address: kubelet's node-ip and the
// advertised API address must be one the other nodes can reach.
func checkAddr(field string, a netip.Addr) error {
	switch {
	case !a.IsValid():
		return fmt.Errorf("%w: %s is not set", ErrParams, field)
	case a.IsUnspecified(), a.IsMulticast():
		return fmt.Errorf("%w: %s %s is not a unicast address", ErrParams, field, a)
	case a.Zone() != "":
		return fmt.Errorf("%w: %s %s has an IPv6 zone, which kubeadm cannot use", ErrParams, field, a)
	}
	return nil
}

// checkPort accepts 0 (kubeadm's default, 6443) or a TCP port.
func checkPort(field string, p int) error {
	if p < 0 || p > 65535 {
		return fmt.Errorf("%w: %s %d is not a TCP port", ErrParams, field, p)
	}
	return nil
}

// checkSubnet accepts an unset prefix (kubeadm's default) or a network
// address; host bits set usually mean a typo in the template.
func checkSubnet(field string, p netip.Prefix) error {
	if !p.IsValid() {
		if p == (netip.Prefix{}) {
			return nil
		}
		return fmt.Errorf("%w: %s is not a valid prefix", ErrParams, field)
	}
	if p.Masked() != p {
		return fmt.Errorf("%w: %s %s has host bits set (network is %s)", ErrParams, field, p, p.Masked())
	}
	return nil
}

// checkEndpoint requires "host:port" with IPv6 in brackets, as kubeadm's
// apiServerEndpoint and controlPlaneEndpoint expect.
func checkEndpoint(field, s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("%w: %s %q is not host:port: %w", ErrParams, field, s, err)
	}
	if host == "" {
		return fmt.Errorf("%w: %s %q has no host", ErrParams, field, s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%w: %s %q has no valid port", ErrParams, field, s)
	}
	return nil
}

// checkSAN accepts an IP address or a DNS name (wildcards are kubeadm's
// business, not ours: none are rendered).
func checkSAN(s string) error {
	if _, err := netip.ParseAddr(s); err == nil {
		return nil
	}
	if len(s) > 253 {
		return fmt.Errorf("%w: certSAN %q is too long", ErrParams, s)
	}
	for _, label := range strings.Split(strings.ToLower(s), ".") {
		if !dnsLabel(label) {
			return fmt.Errorf("%w: certSAN %q is neither an IP address nor a DNS name", ErrParams, s)
		}
	}
	return nil
}

// checkCertificateKey accepts an unset key or kubeadm's format: 32 random
// bytes hex-encoded (what `kubeadm certs certificate-key` prints).
func checkCertificateKey(k vmcontext.Secret) error {
	if k.IsZero() {
		return nil
	}
	b, err := hex.DecodeString(k.Reveal())
	if err != nil || len(b) != 32 {
		return fmt.Errorf("%w: CertificateKey must be 64 hex digits", ErrParams)
	}
	return nil
}

// checkLabels applies Kubernetes' label syntax, which the kubelet would
// otherwise refuse only at start, after kubeadm has done half its work.
func checkLabels(labels map[string]string) error {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("%w: node label key %q: %s", ErrParams, k, errs[0])
		}
		if errs := validation.IsValidLabelValue(labels[k]); len(errs) > 0 {
			return fmt.Errorf("%w: node label %s value %q: %s", ErrParams, k, labels[k], errs[0])
		}
	}
	return nil
}
