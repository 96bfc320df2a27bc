package agent

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/onekube/onekube/agent/safetext"
)

// maxZone is the longest IPv6 zone a published address may carry: a Linux
// interface name (IFNAMSIZ is 16 with its NUL, include/uapi/linux/if.h) or
// a scope number, which is shorter.
const maxZone = 15

// maxAddrText is the longest text of an address with such a zone: 45 bytes
// for an IPv6 address with an embedded IPv4 one, '%', the zone.
const maxAddrText = 45 + 1 + maxZone

// parsePublishedAddr reads an address another VM published (any VM of the
// service may have written it): an IP address whose zone, if any, is a
// short printable name, else an error that quotes the value bounded and
// escaped. netip accepts any zone, a 100 KB one with newlines included,
// and prints it back whole. Whether the address is usable is the caller's
// check (unusableAddress, ownsAddress).
func parsePublishedAddr(raw string) (netip.Addr, error) {
	raw = strings.TrimSpace(raw)
	if len(raw) > maxAddrText {
		return netip.Addr{}, fmt.Errorf("%s is not an IP address (%d bytes)", safetext.Quote(raw, maxAddrText), len(raw))
	}
	a, err := netip.ParseAddr(raw)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%s is not an IP address", safetext.Quote(raw, maxAddrText))
	}
	if z := a.Zone(); len(z) > maxZone || strings.ContainsFunc(z, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return netip.Addr{}, fmt.Errorf("%s has a zone that is no interface name", safetext.Quote(raw, maxAddrText))
	}
	return a, nil
}
