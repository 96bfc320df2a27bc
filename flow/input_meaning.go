package flow

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The meaning of the service-wide inputs the agent interprets, as the lead's
// DECISIONS.md fixes it (issue 8 §1 and §7); flow refuses what the agent
// would refuse, before any VM boots.

// MaxNodeNamePrefix keeps "<prefix>-<VM ID>" within a 63-character DNS label
// whatever the VM ID (oned IDs are 32-bit: at most 10 digits, plus "-").
const MaxNodeNamePrefix = 40

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// checkNodeNamePrefix: ONEAPP_K8S_NODENAME is a prefix; each node is named
// "<prefix>-<VM ID>". Empty means the role name.
func checkNodeNamePrefix(s string) error {
	switch {
	case s == "":
		return nil
	case len(s) > MaxNodeNamePrefix:
		return fmt.Errorf("%q is %d characters: the node name prefix may have at most %d, so that <prefix>-<VM ID> fits a 63-character host name",
			s, len(s), MaxNodeNamePrefix)
	case !dnsLabel.MatchString(s):
		return fmt.Errorf("%q is not a DNS label (lower-case letters, digits and -, starting and ending with a letter or digit): nodes are named <prefix>-<VM ID>, e.g. worker-42", s)
	}
	return nil
}

// addressKind is what a valid ONEAPP_K8S_ADDRESS selects the node's NIC by.
type addressKind int

const (
	addressFirstNIC addressKind = iota // empty: the first NIC
	addressCIDR                        // the NIC whose address is inside
	addressNetwork                     // the NIC on that virtual network
)

// invalidNameChars are the characters oned refuses in object names
// (PoolObjectSQL::INVALID_NAME_CHARS, src/pool/PoolObjectSQL.cc, 7.4.0),
// which also caps names at 128 characters.
const invalidNameChars = "&|:\\\";/'#{}$<>\t\n\v\f\r"

// maxObjectName is oned's limit on object names.
const maxObjectName = 128

// parseAddressInput reads ONEAPP_K8S_ADDRESS, the service-wide selector of
// the NIC that carries Kubernetes traffic. A bare IP is refused: one address
// cannot be every VM's.
func parseAddressInput(s string) (addressKind, netip.Prefix, error) {
	if s == "" {
		return addressFirstNIC, netip.Prefix{}, nil
	}
	if ip, err := netip.ParseAddr(s); err == nil {
		return 0, netip.Prefix{}, fmt.Errorf("%q is one IP address, which cannot be every VM's: give the network as a CIDR, e.g. %s, or a virtual network name",
			s, netip.PrefixFrom(ip, defaultBits(ip)).Masked())
	}
	if strings.Contains(s, "/") {
		if _, err := netip.ParsePrefix(s); err == nil {
			p, err := parseCIDR(s)
			return addressCIDR, p, err
		}
	}
	if err := checkObjectName(s); err != nil {
		return 0, netip.Prefix{}, fmt.Errorf("%q is neither a CIDR (e.g. 10.0.0.0/24) nor a virtual network name: %v", s, err)
	}
	return addressNetwork, netip.Prefix{}, nil
}

// defaultBits is the prefix length suggested for a bare IP: a /24 or /64.
func defaultBits(ip netip.Addr) int {
	if ip.Is4() {
		return 24
	}
	return 64
}

// checkObjectName applies oned's rules for object names.
func checkObjectName(s string) error {
	switch {
	case strings.TrimSpace(s) == "":
		return fmt.Errorf("a name cannot be empty")
	case len(s) > maxObjectName:
		return fmt.Errorf("OpenNebula names have at most %d characters", maxObjectName)
	}
	if i := strings.IndexAny(s, invalidNameChars); i >= 0 {
		return fmt.Errorf("OpenNebula names cannot contain %q", s[i:i+1])
	}
	// oned refuses only some (above); the rest are as invisible and as
	// unlikely to be meant, and its XML cannot carry most of them.
	if i := strings.IndexFunc(s, unicode.IsControl); i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return fmt.Errorf("OpenNebula names cannot contain the control character %q", r)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("not valid UTF-8")
	}
	return nil
}
