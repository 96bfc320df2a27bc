package flow

import (
	"fmt"
	"net/netip"

	vmcontext "github.com/onekube/onekube/context"
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

// checkAddress checks ONEAPP_K8S_ADDRESS (parseAddressInput) and, for a
// CIDR, that the nodes' range does not overlap the pod or service range.
func checkAddress(ps *problems, path, addr string, ranges []namedPrefix) {
	kind, p, err := parseAddressInput(addr)
	if err != nil {
		ps.errorf(path, "%s: %v", vmcontext.KeyAddress, err)
		return
	}
	if kind != addressCIDR {
		return
	}
	for _, r := range ranges {
		if r.prefix.Overlaps(p) {
			ps.errorf(path, "%s: the nodes' range %s overlaps the %s %s", vmcontext.KeyAddress, p, r.what, r.prefix)
		}
	}
}
