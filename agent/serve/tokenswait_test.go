package serve

import (
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/onekube/onekube/agent/system/systemtest"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// TestTokensWaitLimit: a VM waits for a join token for at most the wait
// limit, counted from serve's first sight of it waiting after oned ran it
// (a VM still pending in the scheduler has not started waiting); what the
// VM publishes cannot restart the count. Past the limit it no longer
// counts as waiting, and once nobody else waits and the service has been
// DEPLOYING for longer than the limit too, the token is retired, although
// OneFlow keeps the service DEPLOYING for that VM forever.
func TestTokensWaitLimit(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	clock := systemtest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	t0 := clock.Now()
	og := newFakeService(10)
	og.state = onegate.ServiceDeploying
	og.add("master", 10, nil)
	addNode(t, cs, "master-10", 10)
	og.add("worker", 11, nil)
	og.add("worker", 12, nil)
	og.set(func(f *fakeService) { f.vms[12].State, f.vms[12].LCMState = onegate.StatePending, 0 })
	tk := &Tokens{OneGate: og, Client: cs, Clock: clock}
	at := func(d time.Duration, wantWaiting ...int) {
		t.Helper()
		clock.Advance(t0.Add(d).Sub(clock.Now()))
		mustTick(t, tk)
		if !slices.Equal(tk.report.Waiting, wantWaiting) {
			t.Fatalf("at +%s: waiting %v, want %v", d, tk.report.Waiting, wantWaiting)
		}
	}

	// VM 12, still in the scheduler, is not expected yet: only oned's
	// word that a VM runs earns a token.
	at(0, 11)
	if tk.report.Tokens != 1 {
		t.Fatalf("no token minted for waiting VMs: %+v", tk.report)
	}
	if got := tk.report.WaitingSince; len(got) != 1 || !got["11"].Equal(t0) {
		t.Errorf("waiting since %v, want VM 11 at +0", got)
	}
	if why := tk.report.NotWaiting["12"]; why != "not running yet (STATE 1)" {
		t.Errorf("pending VM 12: %q", why)
	}
	// VM 11 fails, then waits again: its own word, not a fresh start.
	og.set(func(f *fakeService) { f.vms[11].UserTemplate[vmcontext.KeyPubPhase] = "failed" })
	at(30 * time.Minute)
	og.set(func(f *fakeService) { f.vms[11].UserTemplate[vmcontext.KeyPubPhase] = "wait-master" })
	at(31*time.Minute, 11)
	// A new term (this master lost the lease and won it back) keeps the
	// clocks.
	tk.NewTerm()
	at(59*time.Minute, 11)
	// An hour after serve first saw it: VM 11 is given up. VM 12 only now
	// leaves the scheduler; its hour starts now.
	og.set(func(f *fakeService) { f.vms[12].State, f.vms[12].LCMState = onegate.StateActive, onegate.LCMRunning })
	at(60*time.Minute, 12)
	if got := og.ut(10, vmcontext.KeyPubWaiting); got != "12" {
		t.Errorf("ONEGATE_K8S_WAITING = %q, want 12", got)
	}
	if got := og.ut(10, vmcontext.KeyPubGivenUp); got != "11" {
		t.Errorf("ONEGATE_K8S_GIVEN_UP = %q, want 11", got)
	}
	if got := tk.report.GivenUp; len(got) != 1 || !got["11"].Equal(t0) || tk.report.WaitLimit != "1h0m0s" {
		t.Errorf("report: given up %v, limit %q", got, tk.report.WaitLimit)
	}
	if tk.report.Growing {
		t.Error("the service counts as growing after an hour of DEPLOYING")
	}
	at(119*time.Minute, 12)
	// Nobody waits any more; the service has been DEPLOYING for two
	// hours: the token is retired, and deleted after the grace.
	at(120 * time.Minute)
	if _, ok := current(tokenSecrets(t, cs), clock.Now()); ok {
		t.Error("the token is still handed out with nobody waiting")
	}
	if got := og.ut(10, vmcontext.KeyPubGivenUp); got != "11 12" {
		t.Errorf("ONEGATE_K8S_GIVEN_UP = %q, want 11 12", got)
	}
	at(120*time.Minute + DefaultRetireGrace)
	if toks := tokenSecrets(t, cs); len(toks) != 0 {
		t.Errorf("%d tokens left after the grace", len(toks))
	}

	// VM 11 joins after all (its Node appears), VM 12 leaves the service:
	// neither is given up any more; a VM 12 coming back starts afresh.
	addNode(t, cs, "worker-11", 11)
	og.remove(12)
	at(125 * time.Minute)
	if tk.report.GivenUp != nil || og.ut(10, vmcontext.KeyPubGivenUp) != "" {
		t.Errorf("given up after joining or leaving: %v, published %q", tk.report.GivenUp, og.ut(10, vmcontext.KeyPubGivenUp))
	}
	og.add("worker", 12, nil)
	at(126*time.Minute, 12)
	if tk.report.Tokens != 1 {
		t.Errorf("no token for a VM waiting anew: %+v", tk.report)
	}
}
