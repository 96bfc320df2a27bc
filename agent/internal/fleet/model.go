package fleet

import (
	"time"
)

// Model is what the fleet does not run for real: how long a VM boots, how
// long kubeadm takes, how late OneFlow notices READY. Defaults are issue
// 14's, with G as issue 19 corrected it.
type Model struct {
	Boot time.Duration // B: VM created -> its agent starts
	Init time.Duration // I: kubeadm init
	Join time.Duration // J: kubeadm join
	// G is OneFlow noticing the master's READY in straight mode. OneFlow
	// 6.x and 7.x wait for it on oned's update event (EventManager#
	// wait_report_ready subscribes to `EVENT API one.vm.update 1` and
	// matches READY=YES in the text OneGate sent), so G is the event's
	// latency, about a second; shared/reference/onegate.md §3.
	G time.Duration
	// GPoll is the fallback when the event is missed: OneFlow re-reads
	// READY every :wait_timeout: (30 s by default), so a missed event
	// costs at most GPoll. Reported as the straight worst case.
	GPoll time.Duration
}

// DefaultModel returns B = 40 s, I = 90 s, J = 30 s, G = 1 s (the event),
// GPoll = 30 s (OneFlow's :wait_timeout:).
func DefaultModel() Model {
	return Model{Boot: 40 * time.Second, Init: 90 * time.Second, Join: 30 * time.Second,
		G: time.Second, GPoll: 30 * time.Second}
}

// Limit is the physical floor B + I + J: workers boot while the master
// initialises, and join the moment it published.
func (m Model) Limit() time.Duration { return m.Boot + m.Init + m.Join }

// Legacy is the legacy straight flow, B + I + G + B + J: workers boot only
// after OneFlow noticed the master's READY, with the same G as ours.
func (m Model) Legacy() time.Duration { return m.Boot + m.Init + m.G + m.Boot + m.Join }

// PollWorst is a straight run's time to ready had OneFlow missed the
// event and waited a whole GPoll: in straight mode workers are created
// only after G, so G adds to the time to ready and nothing else moves.
func (m Model) PollWorst(timeToReady time.Duration) time.Duration {
	return timeToReady - m.G + m.GPoll
}
