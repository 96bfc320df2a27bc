package agent

import (
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// OneGate has no watch, so a worker waiting for the master pays for its
// latency in polls. A uniform interval cannot give both a short delay after
// the master publishes and a light load on OneGate: with N workers polling
// every P seconds, the load is N/P requests a second and the delay up to P.
// So the master publishes when it expects to be done (ONEGATE_K8S_ETA), and
// a worker spends its polls where they pay:
//
//   - far from the estimate, it halves the remaining time on each poll
//     (about log2(I/P) polls during a kubeadm init of I seconds), so an
//     estimate revised downwards or a master done early is seen within half
//     the time that was left;
//   - close to it and for a while past it, it polls once per ClosePoll, on
//     its own slot of that period: slots spread by VM ID keep the load at
//     N/ClosePoll even when every worker arrived together, and bound the
//     delay after the publish by ClosePoll (2 s by default: N/2 requests a
//     second);
//   - with no estimate (an older master, or one far past its estimate), it
//     falls back to the capped, jittered backoff of every other wait.
const (
	// farPollCap bounds one sleep towards an estimate, so a wrong or
	// hostile one costs at most one poll a minute.
	farPollCap = time.Minute
	// closeOverrun is how long past its estimate a master is still
	// polled closely before the worker backs off.
	closeOverrun = 2 * time.Minute
	// goldenRatio spreads consecutive VM IDs evenly over a period (the
	// fractional parts of k*phi leave gaps of at most two sizes).
	goldenRatio = 0.6180339887498949
)

// spreadOffset is VM vmid's fixed offset within a period: consecutive IDs,
// as OneFlow creates them, land far apart, and any set of them covers the
// period almost evenly.
func spreadOffset(vmid int, period time.Duration) time.Duration {
	f := float64(vmid) * goldenRatio
	f -= float64(int64(f))
	return time.Duration(f * float64(period))
}

// pacer decides how long a waiting worker sleeps before it reads the
// master again, from what the master last published.
type pacer struct {
	period  time.Duration // Tunables.ClosePoll
	slot    time.Duration // this VM's offset within period
	backoff *backoff.ExponentialBackOff
	// late is set once the master is past its estimate and closeOverrun:
	// the backoff then starts from period.
	late bool
}

func newPacer(vmid int, t *Tunables, clock system.Clock) *pacer {
	return &pacer{period: t.ClosePoll, slot: spreadOffset(vmid, t.ClosePoll), backoff: newBackOff(t.PollInterval, t.MaxPollInterval, clock)}
}

// next is the sleep before the next poll at now, given the master's
// estimate (zero when it published none).
func (p *pacer) next(now, eta time.Time) time.Duration {
	if eta.IsZero() {
		return p.backoff.NextBackOff()
	}
	left := eta.Sub(now)
	switch {
	case left > 2*p.period:
		// On its slot too: workers that started apart converge as they
		// halve, and would otherwise poll in the same instant.
		return p.untilSlot(now, min(left/2, farPollCap))
	case -left <= closeOverrun:
		p.late = false
		return p.untilSlot(now, 0)
	}
	if !p.late {
		p.late = true
		p.backoff.InitialInterval = min(p.period, p.backoff.MaxInterval)
		p.backoff.Reset()
	}
	return p.backoff.NextBackOff()
}

// untilSlot is the time from now to this VM's first slot, on the clock's
// grid of periods, after at least minWait; never zero. Every
// worker polls at most once a period, each on its own slot.
func (p *pacer) untilSlot(now time.Time, minWait time.Duration) time.Duration {
	from := now.Add(minWait)
	into := time.Duration(from.UnixNano() % int64(p.period))
	if into < 0 {
		into += p.period
	}
	delta := p.slot - into
	if delta <= 0 {
		delta += p.period
	}
	return minWait + delta
}

// publishedETA reads a master's estimate; zero when absent, malformed, or
// once the master is READY (the estimate is then history).
func publishedETA(vm *onegate.VM) time.Time {
	if vm == nil || isReady(vm) {
		return time.Time{}
	}
	raw := strings.TrimSpace(vm.UserTemplate[vmcontext.KeyPubETA])
	if raw == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		return time.Time{}
	}
	return t
}
