package agent

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
)

// refusedAs is kubeadm's kubelet-start refusal of a join under name, as
// the agent's Exec error carries it (seen on the real bed).
func refusedAs(name string) error {
	return fmt.Errorf("kubeadm join --config /var/lib/onekube/kubeadm-join.yaml: exit status 1: "+
		"error: error execution phase kubelet-start: a Node with name %q and status \"Ready\" already exists in the cluster. "+
		"You must delete the existing Node or change the name of this new joining Node", name)
}

func TestStaleOwnNode(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"own name, Ready", refusedAs("node-8"), true},
		{"another name", refusedAs("node-9"), false},
		{"a prefix of the name", refusedAs("node-80"), false},
		{"NotReady is not refused by kubeadm", errors.New(`a Node with name "node-8" and status "NotReady" already exists in the cluster`), false},
		{"another failure", errors.New("error execution phase preflight: couldn't validate the identity of the API Server"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := staleOwnNode(c.err, "node-8"); got != c.want {
				t.Errorf("staleOwnNode = %v, want %v", got, c.want)
			}
		})
	}
}

// TestJoinWaitsOutItsOwnStaleNode: the documented re-bootstrap of a worker
// (or a quick recreate) finds its own Node still Ready, and real kubeadm
// refuses the join until the node controller marks it NotReady. The agent
// waits, resets the refused attempt and joins again, within one run.
func TestJoinWaitsOutItsOwnStaleNode(t *testing.T) {
	og := newService(8, []int{3}, []int{8})
	og.publishMasterData(3, goodToken, goodHash)
	h := newHarness(t, og)
	h.kadm.joinErr = []error{refusedAs("node-8"), refusedAs("node-8"), nil}
	start := h.clock.Now()
	if err := h.run(); err != nil {
		t.Fatalf("%v\n%s", err, h.logs)
	}
	want := "version,join,reset,join,reset,join"
	if got := strings.Join(h.kadm.calls, ","); got != want {
		t.Errorf("kubeadm calls %s, want %s", got, want)
	}
	if waited := h.clock.Now().Sub(start); waited < 2*staleNodeRetry {
		t.Errorf("waited %s between tries, want at least %s", waited, 2*staleNodeRetry)
	}
	if og.ut(8, vmcontext.KeyReady) != "YES" || og.ut(8, vmcontext.KeyPubPhase) != PhaseDone {
		t.Errorf("READY=%q PHASE=%q", og.ut(8, vmcontext.KeyReady), og.ut(8, vmcontext.KeyPubPhase))
	}
	// The wait is announced once, so serve keeps the token meanwhile.
	var joins int
	for _, u := range og.updates {
		if kvMap(u)[vmcontext.KeyPubPhase] == PhaseKubeadmJoin {
			joins++
		}
	}
	if joins != 1 {
		t.Errorf("kubeadm-join published %d times, want once", joins)
	}
}

// TestJoinGivesUpOnANodeThatStaysReady: a kubelet that still runs under
// this name keeps its Node Ready; the wait is bounded and the failure
// says why, with kubeadm's reason.
func TestJoinGivesUpOnANodeThatStaysReady(t *testing.T) {
	og := newService(8, []int{3}, []int{8})
	og.publishMasterData(3, goodToken, goodHash)
	h := newHarness(t, og)
	for range 100 {
		h.kadm.joinErr = append(h.kadm.joinErr, refusedAs("node-8"))
	}
	start := h.clock.Now()
	err := h.run()
	if err == nil || !strings.Contains(err.Error(), "stayed Ready") || !strings.Contains(err.Error(), "already exists in the cluster") {
		t.Fatalf("err = %v", err)
	}
	if waited := h.clock.Now().Sub(start); waited < staleNodeWait || waited > staleNodeWait+2*staleNodeRetry {
		t.Errorf("gave up after %s, want about %s", waited, staleNodeWait)
	}
	if joins := h.kadm.count("join"); joins != int(staleNodeWait/staleNodeRetry)+1 {
		t.Errorf("%d joins", joins)
	}
	if og.ut(8, vmcontext.KeyReady) == "YES" || og.ut(8, vmcontext.KeyPubPhase) != PhaseFailed {
		t.Errorf("READY=%q PHASE=%q", og.ut(8, vmcontext.KeyReady), og.ut(8, vmcontext.KeyPubPhase))
	}
}

// TestJoinDoesNotWaitForAnotherName: a refusal naming another Node is not
// this VM's stale registration: it fails at once.
func TestJoinDoesNotWaitForAnotherName(t *testing.T) {
	og := newService(8, []int{3}, []int{8})
	og.publishMasterData(3, goodToken, goodHash)
	h := newHarness(t, og)
	h.kadm.joinErr = []error{refusedAs("node-9")}
	start := h.clock.Now()
	if err := h.run(); err == nil {
		t.Fatal("joined")
	}
	if h.kadm.count("join") != 1 || h.kadm.count("reset") != 0 || h.clock.Now().Sub(start) > time.Second {
		t.Errorf("kubeadm calls %v after %s", h.kadm.calls, h.clock.Now().Sub(start))
	}
}

// FuzzStaleOwnNode: kubeadm's output is outside input. The matcher never
// panics, and it fires only when kubeadm's refusal names exactly this
// node, Ready.
func FuzzStaleOwnNode(f *testing.F) {
	f.Add(refusedAs("node-8").Error(), "node-8")
	f.Add(refusedAs("node-80").Error(), "node-8")
	f.Add(`a Node with name "" and status "Ready" already exists in the cluster`, "")
	f.Fuzz(func(t *testing.T, out, name string) {
		got := staleOwnNode(errors.New(out), name)
		want := strings.Contains(out, fmt.Sprintf("a Node with name %q and status \"Ready\" already exists in the cluster", name))
		if got != want {
			t.Errorf("staleOwnNode(%q, %q) = %v", out, name, got)
		}
	})
}
