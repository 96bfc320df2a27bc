package serve

import (
	"time"

	"github.com/onekube/onekube/context/onegate"
)

// DefaultWaitLimit is how long a VM may wait to join before serve stops
// keeping a join token for it. An honest worker is done well within it:
// its agent waits for the join data at most --master-timeout (30 min) and
// bounds kubeadm join by --command-timeout (20 min), itself made of
// kubeadm's 5 min discovery and 5 min TLS bootstrap timeouts
// (cmd/kubeadm/app/constants: DiscoveryTimeout, TLSBootstrapTimeout);
// past them it publishes PHASE=failed and waits for nothing. The clock
// starts only once the VM runs, so its boot adds nothing. A token minted
// for it lives at most the token TTL (1 h by default) past the limit.
const DefaultWaitLimit = time.Hour

// waitClocks is serve's own count of how long each VM has waited to join.
// A VM's clock starts the first time serve sees it waiting after oned ran
// it, and stops only when the VM has a live Node or leaves the service:
// nothing a VM publishes (a failed phase, then a wait again) restarts it.
// It lives in memory: a restart of serve, or another master acting,
// counts afresh, once more at most the limit.
type waitClocks struct {
	since map[int]time.Time
}

// observe records that VM id waits at now; started says oned has run it.
// It returns when the VM started waiting (zero: not yet counted).
func (w *waitClocks) observe(id int, started bool, now time.Time) time.Time {
	if w.since == nil {
		w.since = map[int]time.Time{}
	}
	s, ok := w.since[id]
	if !ok && started {
		s = now
		w.since[id] = s
	}
	return s
}

// keep forgets every VM not in ids: it has a live Node or left the service.
func (w *waitClocks) keep(ids map[int]bool) {
	for id := range w.since {
		if !ids[id] {
			delete(w.since, id)
		}
	}
}

// runStarted: oned has run the VM, past PENDING, HOLD, PROLOG and BOOT;
// only then can its agent be waiting. No VM can forge its STATE or
// LCM_STATE (reference onegate-trust.md).
func runStarted(vm *onegate.VM) bool {
	return vm.State == onegate.StateActive && vm.LCMState >= onegate.LCMRunning
}
