package fleet

import (
	"math/rand/v2"
	"time"
)

// Model is what the fleet does not run for real: how long a VM boots, how
// long kubeadm takes, how late OneFlow notices READY. Defaults are issue
// 14's.
type Model struct {
	Boot time.Duration // B: VM created -> its agent starts
	Init time.Duration // I: kubeadm init
	Join time.Duration // J: kubeadm join
	// GMax bounds G, OneFlow noticing the master's READY in straight mode:
	// uniform in [0, GMax], drawn once per run from Seed; Seed 0 takes
	// its mean, GMax/2, the G of the legacy model beside it.
	GMax time.Duration
	Seed uint64
}

// DefaultSeed is the seed of the published figures: none, G at its mean,
// so a straight row and the legacy model differ only by what the agent does.
const DefaultSeed = 0

// DefaultModel returns B = 40 s, I = 90 s, J = 30 s, G uniform 0–30 s.
func DefaultModel() Model {
	return Model{Boot: 40 * time.Second, Init: 90 * time.Second, Join: 30 * time.Second,
		GMax: 30 * time.Second, Seed: DefaultSeed}
}

// Limit is the physical floor B + I + J: workers boot while the master
// initialises, and join the moment it published.
func (m Model) Limit() time.Duration { return m.Boot + m.Init + m.Join }

// Legacy is the legacy straight flow, B + I + E[G] + B + J: workers boot
// only after OneFlow noticed the master's READY.
func (m Model) Legacy() time.Duration { return m.Boot + m.Init + m.GMax/2 + m.Boot + m.Join }

// G draws OneFlow's delay for one run: the same for every run of a seed,
// so the rows of a report differ by N and mode alone.
func (m Model) G() time.Duration {
	if m.Seed == 0 {
		return m.GMax / 2
	}
	r := rand.New(rand.NewPCG(m.Seed, 14))
	return time.Duration(r.Int64N(int64(m.GMax/time.Millisecond)+1)) * time.Millisecond
}
