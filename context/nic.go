package context

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"net/netip"
	"sort"
	"strconv"
	"strings"
)

// NICInfo is one network interface as the context describes it (ETHn_*).
type NICInfo struct {
	Index   int        // n of ETHn
	IP      netip.Addr // zero when ETHn_IP is empty or malformed
	IP6     netip.Addr // ETHn_IP6 (global), zero when absent
	Mask    string
	Network string // ETHn_NETWORK: the network address, e.g. 10.0.0.0
	Gateway string
	MAC     string
	DNS     string
	MTU     string
}

// Prefix is the NIC's subnet from IP and MASK, when both are valid.
func (n NICInfo) Prefix() (netip.Prefix, bool) {
	if !n.IP.Is4() {
		return netip.Prefix{}, false
	}
	m, err := netip.ParseAddr(n.Mask)
	if err != nil || !m.Is4() {
		return netip.Prefix{}, false
	}
	b := m.As4()
	mask := binary.BigEndian.Uint32(b[:])
	ones := bits.LeadingZeros32(^mask)
	if ones < 32 && mask != ^uint32(0)<<(32-ones) { // not a contiguous mask
		return netip.Prefix{}, false
	}
	p, err := n.IP.Prefix(ones)
	return p, err == nil
}

// NICs returns the interfaces named by ETHn_* variables (aliases excluded),
// ordered by n.
func (v Vars) NICs() []NICInfo {
	byIndex := map[int]*NICInfo{}
	for k, val := range v {
		idx, field, ok := nicKey(k)
		if !ok {
			continue
		}
		n := byIndex[idx]
		if n == nil {
			n = &NICInfo{Index: idx}
			byIndex[idx] = n
		}
		val = strings.TrimSpace(val)
		switch field {
		case "IP":
			n.IP, _ = netip.ParseAddr(val)
		case "IP6":
			n.IP6, _ = netip.ParseAddr(val)
		case "MASK":
			n.Mask = val
		case "NETWORK":
			n.Network = val
		case "GATEWAY":
			n.Gateway = val
		case "MAC":
			n.MAC = val
		case "DNS":
			n.DNS = val
		case "MTU":
			n.MTU = val
		}
	}
	out := make([]NICInfo, 0, len(byIndex))
	for _, n := range byIndex {
		out = append(out, *n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// nicKey splits ETH<n>_<FIELD>; ETH<n>_ALIAS<m>_* is not a NIC field.
func nicKey(k string) (int, string, bool) {
	rest, ok := strings.CutPrefix(k, "ETH")
	if !ok {
		return 0, "", false
	}
	num, field, ok := strings.Cut(rest, "_")
	if !ok || num == "" || strings.HasPrefix(field, "ALIAS") {
		return 0, "", false
	}
	idx, err := strconv.Atoi(num)
	if err != nil || idx < 0 || strconv.Itoa(idx) != num {
		return 0, "", false
	}
	return idx, field, true
}

// NodeAddress picks the address the node advertises, from ONEAPP_K8S_ADDRESS
// (reference §4): an IP of one of the NICs; a CIDR, meaning the first NIC
// with an IP inside it; or a network address (ETHn_NETWORK), meaning that
// NIC's IP. Empty means ETH0_IP, else the first NIC with an IP. An IP that no
// NIC has is accepted only when the context lists no NICs at all.
func NodeAddress(s Settings, nics []NICInfo) (netip.Addr, error) {
	raw := strings.TrimSpace(s.Address)
	if raw == "" {
		for _, n := range nics {
			if n.IP.IsValid() {
				return n.IP, nil
			}
		}
		return netip.Addr{}, &SettingError{Key: KeyAddress, Msg: "empty, and the context has no ETHn_IP (set CONTEXT NETWORK=YES or the address)"}
	}
	if p, err := netip.ParsePrefix(raw); err == nil {
		p = p.Masked()
		for _, n := range nics {
			if n.IP.IsValid() && p.Contains(n.IP) {
				return n.IP, nil
			}
		}
		return netip.Addr{}, &SettingError{Key: KeyAddress, Msg: fmt.Sprintf("no NIC has an address in %s (NICs: %s)", p, nicList(nics))}
	}
	a, err := netip.ParseAddr(raw)
	if err != nil {
		return netip.Addr{}, &SettingError{Key: KeyAddress, Msg: fmt.Sprintf("%q is neither an IP, a CIDR nor a network address", raw)}
	}
	for _, n := range nics {
		if n.IP == a {
			return a, nil
		}
	}
	for _, n := range nics {
		if net, err := netip.ParseAddr(n.Network); err == nil && net == a && n.IP.IsValid() {
			return n.IP, nil
		}
		if p, ok := n.Prefix(); ok && p.Addr() == a && p.Bits() < 32 {
			return n.IP, nil
		}
	}
	if len(nics) == 0 {
		return a, nil
	}
	return netip.Addr{}, &SettingError{Key: KeyAddress, Msg: fmt.Sprintf("%s is neither the IP nor the network of a NIC (NICs: %s)", a, nicList(nics))}
}

func nicList(nics []NICInfo) string {
	var parts []string
	for _, n := range nics {
		if p, ok := n.Prefix(); ok {
			parts = append(parts, fmt.Sprintf("ETH%d %s/%d", n.Index, n.IP, p.Bits()))
		} else if n.IP.IsValid() {
			parts = append(parts, fmt.Sprintf("ETH%d %s", n.Index, n.IP))
		}
	}
	if len(parts) == 0 {
		return "none with an IP"
	}
	return strings.Join(parts, ", ")
}
