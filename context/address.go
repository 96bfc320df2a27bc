package context

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode"
)

// AddressSelector is ONEAPP_K8S_ADDRESS: which NIC carries Kubernetes
// traffic (the advertise address and the kubelet's node-ip). The input is
// service-wide, so it names a network, never one VM's address
// (DECISIONS.md "ONEAPP_K8S_ADDRESS"). The zero value picks the first NIC.
type AddressSelector struct {
	// CIDR picks the NIC with an address inside it.
	CIDR netip.Prefix
	// Network picks the NIC attached to the OpenNebula virtual network of
	// this name.
	Network string
}

// maxNetworkName bounds a network name; OpenNebula's are short.
const maxNetworkName = 128

// ParseAddressSelector reads ONEAPP_K8S_ADDRESS: empty, a CIDR (IPv4 or
// IPv6, no host bits) or a virtual network name. A bare IP is refused: one
// IP cannot be every VM's address.
func ParseAddressSelector(raw string) (AddressSelector, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return AddressSelector{}, nil
	}
	if p, err := netip.ParsePrefix(raw); err == nil {
		if m := p.Masked(); m != p {
			return AddressSelector{}, fmt.Errorf("%q has host bits set; did you mean %s?", raw, m)
		}
		return AddressSelector{CIDR: p}, nil
	}
	if a, err := netip.ParseAddr(raw); err == nil {
		bits := 24
		if a.Is6() {
			bits = 64
		}
		example, _ := a.Prefix(bits)
		return AddressSelector{}, fmt.Errorf("%q is one IP, which cannot be every VM's address; give the network as a CIDR, e.g. %s", raw, example)
	}
	if strings.ContainsAny(raw, "/") || len(raw) > maxNetworkName || strings.IndexFunc(raw, unicode.IsControl) >= 0 {
		return AddressSelector{}, fmt.Errorf("%q is neither a CIDR like 10.0.0.0/24 nor a virtual network name", raw)
	}
	return AddressSelector{Network: raw}, nil
}

// IsZero reports whether the selector picks the first NIC.
func (s AddressSelector) IsZero() bool { return !s.CIDR.IsValid() && s.Network == "" }

// String is the selector as written in the template.
func (s AddressSelector) String() string {
	switch {
	case s.CIDR.IsValid():
		return s.CIDR.String()
	case s.Network != "":
		return s.Network
	}
	return ""
}

// Pick returns the NIC and the address the node uses. nics are in ETHn
// order. A NIC's IPv4 address is preferred over its IPv6 ones, except
// where the CIDR says otherwise.
func (s AddressSelector) Pick(nics []NICInfo) (NICInfo, netip.Addr, error) {
	bad := func(format string, a ...any) (NICInfo, netip.Addr, error) {
		return NICInfo{}, netip.Addr{}, &SettingError{Key: KeyAddress, Msg: fmt.Sprintf(format, a...)}
	}
	switch {
	case s.CIDR.IsValid():
		for _, n := range nics {
			for _, a := range n.Addrs() {
				if s.CIDR.Contains(a) {
					return n, a, nil
				}
			}
		}
		return bad("no NIC has an address in %s (NICs: %s)", s.CIDR, nicList(nics))
	case s.Network != "":
		known := false
		for _, n := range nics {
			known = known || n.NetworkName != ""
			if n.NetworkName == s.Network {
				if addrs := n.Addrs(); len(addrs) > 0 {
					return n, addrs[0], nil
				}
				return bad("the NIC ETH%d on network %q has no address", n.Index, s.Network)
			}
		}
		if !known {
			return bad("network %q: OneGate reported no network names for this VM's NICs", s.Network)
		}
		return bad("no NIC is attached to network %q (NICs: %s)", s.Network, nicList(nics))
	}
	if len(nics) == 0 {
		return bad("empty, and the VM has no NIC with an address (set CONTEXT NETWORK=YES)")
	}
	n := nics[0]
	if addrs := n.Addrs(); len(addrs) > 0 {
		return n, addrs[0], nil
	}
	return bad("empty, and the first NIC ETH%d has no address", n.Index)
}

// CheckFamilies refuses a node address whose IP family differs from the
// pod and service networks': kubeadm would render a cluster whose nodes
// cannot reach their own pods. Single-stack IPv6 works end to end.
func CheckFamilies(node netip.Addr, pods, services netip.Prefix) error {
	fam := func(is6 bool) string {
		if is6 {
			return "IPv6"
		}
		return "IPv4"
	}
	node6 := node.Is6() && !node.Is4In6()
	for _, c := range []struct {
		key string
		p   netip.Prefix
	}{{KeyPodsNetwork, pods}, {KeyServicesNet, services}} {
		if c.p.IsValid() && c.p.Addr().Is6() != node6 {
			hint := "set it to an IPv4 network"
			if node6 {
				hint = "set IPv6 pod and service networks, e.g. fd10::/56 and fd20::/112"
			}
			return &SettingError{Key: c.key, Msg: fmt.Sprintf("%s is %s but the node address %s is %s; %s",
				c.p, fam(c.p.Addr().Is6()), node, fam(node6), hint)}
		}
	}
	return nil
}
