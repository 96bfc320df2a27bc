package flow

import (
	"fmt"
	"net/netip"
)

// namedPrefix is a CIDR with the path it came from, for overlap messages.
type namedPrefix struct {
	path   string
	what   string
	prefix netip.Prefix
}

func parseCIDR(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return p, fmt.Errorf("%q is not a CIDR (e.g. 10.244.0.0/16)", s)
	}
	if p.Masked() != p {
		return p, fmt.Errorf("%q has host bits set (did you mean %s?)", s, p.Masked())
	}
	return p, nil
}

// checkOverlaps reports every pair of prefixes that overlap; the later one
// of the pair gets the error.
func checkOverlaps(ps *problems, prefixes []namedPrefix) {
	for i, a := range prefixes {
		for _, b := range prefixes[:i] {
			if a.prefix.Overlaps(b.prefix) {
				ps.errorf(a.path, "%s %s overlaps %s %s (%s): pods, services and nodes need disjoint ranges",
					a.what, a.prefix, b.what, b.prefix, b.path)
			}
		}
	}
}

// checkAddress reports an API server address (IP or CIDR) that falls in the
// pod or service range; a network name is left to the agent.
func checkAddress(ps *problems, path, addr string, ranges []namedPrefix) {
	if ip, err := netip.ParseAddr(addr); err == nil {
		for _, r := range ranges {
			if r.prefix.Contains(ip) {
				ps.errorf(path, "API server address %s is inside the %s %s", ip, r.what, r.prefix)
			}
		}
		return
	}
	if p, err := netip.ParsePrefix(addr); err == nil {
		for _, r := range ranges {
			if r.prefix.Overlaps(p.Masked()) {
				ps.errorf(path, "API server address range %s overlaps the %s %s", p, r.what, r.prefix)
			}
		}
	}
}
