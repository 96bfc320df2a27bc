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

// NICInfo is one network interface as the context describes it (ETHn_*),
// plus the name of its virtual network, which only OneGate's GET /vm tells
// (TEMPLATE.NIC[].NETWORK); the agent fills it in by MAC.
type NICInfo struct {
	Index       int        // n of ETHn
	IP          netip.Addr // zero when ETHn_IP is empty or malformed
	IP6         netip.Addr // ETHn_IP6 (global), zero when absent
	IP6ULA      netip.Addr // ETHn_IP6_ULA (unique local), zero when absent
	NetworkName string     // the virtual network's name; "" when unknown
	Mask        string
	Network     string // ETHn_NETWORK: the network address, e.g. 10.0.0.0
	Gateway     string
	MAC         string
	DNS         string
	MTU         string
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
		case "IP6_ULA":
			n.IP6ULA, _ = netip.ParseAddr(val)
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

// Addrs returns the NIC's addresses: IPv4, then global IPv6, then ULA.
func (n NICInfo) Addrs() []netip.Addr {
	var out []netip.Addr
	for _, a := range []netip.Addr{n.IP, n.IP6, n.IP6ULA} {
		if a.IsValid() {
			out = append(out, a)
		}
	}
	return out
}

// nicList describes NICs for an error: "ETH0 10.0.0.5/24 (network priv)".
func nicList(nics []NICInfo) string {
	var parts []string
	for _, n := range nics {
		var addrs []string
		for _, a := range n.Addrs() {
			if p, ok := n.Prefix(); ok && a == n.IP {
				addrs = append(addrs, fmt.Sprintf("%s/%d", a, p.Bits()))
			} else {
				addrs = append(addrs, a.String())
			}
		}
		if len(addrs) == 0 {
			addrs = []string{"no address"}
		}
		part := fmt.Sprintf("ETH%d %s", n.Index, strings.Join(addrs, " "))
		if n.NetworkName != "" {
			part += fmt.Sprintf(" (network %q)", n.NetworkName)
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
