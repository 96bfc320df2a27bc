package onegatesim

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"net/netip"
)

// nicLease is the NIC a VM gets: an address from the pool and a MAC built
// the way oned builds it (02:00 followed by the IPv4 address).
type nicLease struct {
	ip      netip.Addr
	mac     string
	mask    string
	network string // network address
	gateway netip.Addr
}

// lease picks the lowest free address of the pool, skipping the network
// address, the gateway (first host) and the broadcast address. Callers hold s.mu.
func (s *Sim) lease() (nicLease, error) {
	p := s.o.Network
	if !p.Addr().Is4() {
		return nicLease{}, fmt.Errorf("network %s: only IPv4 pools are simulated", p)
	}
	gw := p.Addr().Next()
	mask := net.CIDRMask(p.Bits(), 32)
	for a := gw.Next(); p.Contains(a); a = a.Next() {
		if !p.Contains(a.Next()) { // broadcast
			break
		}
		if s.usedIPs[a] {
			continue
		}
		s.usedIPs[a] = true
		b := a.As4()
		return nicLease{
			ip:      a,
			mac:     fmt.Sprintf("02:00:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3]),
			mask:    net.IP(mask).String(),
			network: p.Addr().String(),
			gateway: gw,
		}, nil
	}
	return nicLease{}, fmt.Errorf("%w: %s", ErrPoolExhausted, p)
}

// newToken returns a random OneGate token shaped like oned's (the base64 of
// a 16-byte AES block).
func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generating token: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b[:]), nil
}
