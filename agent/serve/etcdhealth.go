package serve

import (
	"net/netip"
	"time"

	"github.com/onekube/onekube/agent/etcdm"
)

// memberKey names one etcd member across listings.
type memberKey struct {
	id   uint64
	peer netip.Addr
}

// sickness is a run of failed health checks of one member.
type sickness struct {
	since  time.Time
	probes int
}

// observe records one listing: a healthy member's run ends, a failing
// one's grows, a member no longer listed is forgotten.
func (c *ControlPlane) observe(ms []etcdm.Member) {
	now := c.Clock.Now()
	next := map[memberKey]sickness{}
	for _, m := range ms {
		if m.Healthy {
			continue
		}
		k := memberKey{m.ID, m.PeerIP()}
		s, ok := c.sick[k]
		if !ok {
			s = sickness{since: now}
		}
		s.probes++
		next[k] = s
	}
	c.sick = next
}

// deadLongEnough: m's health checks failed in at least staleProbes
// listings in a row, over at least staleFor.
func (c *ControlPlane) deadLongEnough(m etcdm.Member) bool {
	s, ok := c.sick[memberKey{m.ID, m.PeerIP()}]
	return ok && s.probes >= staleProbes && c.Clock.Now().Sub(s.since) >= staleFor
}
