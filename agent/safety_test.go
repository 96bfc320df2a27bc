package agent

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/onekube/onekube/agent/state"
	vmcontext "github.com/onekube/onekube/context"
)

// Tests of issue 8 §3: the agent never destroys or forks a live cluster.

// bootMaster runs master VM 3 to success and returns its harness.
func bootMaster(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, newService(3, []int{3}, []int{8}))
	if err := h.run(); err != nil {
		t.Fatalf("first bootstrap: %v\n%s", err, h.logs)
	}
	return h
}

// loseRecord removes the sentinel and puts content (or nothing) in place
// of the state file: the agent's memory of the bootstrap is gone, the
// control plane on disk is not.
func loseRecord(t *testing.T, h *harness, content string) {
	t.Helper()
	for _, f := range []string{state.SentinelFile, state.StateFile} {
		if err := h.root.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if content != "" {
		if err := h.root.WriteFile(state.StateFile, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLostStateWithLiveClusterAdopts: with its record deleted, null, {},
// emptied or corrupt, a master whose disk holds the control plane it
// published runs no kubeadm at all, resets nothing, and finishes.
func TestLostStateWithLiveClusterAdopts(t *testing.T) {
	for name, content := range map[string]string{
		"deleted": "",
		"null":    "null",
		"{}":      "{}",
		"emptied": `{"version":2,"vmid":3,"role":"init","phase":"done","completed":[]}`,
		"corrupt": `{"version":2,"vmid":3,"completed":["tok`,
	} {
		t.Run(name, func(t *testing.T) {
			h := bootMaster(t)
			token := h.og.ut(3, vmcontext.KeyPubToken)
			loseRecord(t, h, content)
			calls := len(h.kadm.calls)
			if err := h.run(); err != nil {
				t.Fatalf("rerun: %v\n%s", err, h.logs)
			}
			if got := h.kadm.calls[calls:]; !slices.Equal(got, []string{"version"}) {
				t.Errorf("kubeadm calls %v, want only version", got)
			}
			if h.og.ut(3, vmcontext.KeyPubToken) != token || h.og.ut(3, vmcontext.KeyReady) != "YES" || h.og.ut(3, vmcontext.KeyPubPhase) != PhaseDone {
				t.Error("the published cluster changed")
			}
			if ok, _ := h.root.Exists(state.SentinelFile); !ok {
				t.Error("no sentinel after adopting")
			}
			if name == "corrupt" {
				if !strings.Contains(h.logs.String(), "state.json.corrupt-") {
					t.Errorf("corrupt file not set aside:\n%s", h.logs)
				}
			}
		})
	}
}

// TestLostStateWithForeignControlPlaneRefuses: the files on disk are not
// what this VM published (another CA): refused, nothing reset. Once the
// disk is the published one again, the next run adopts it and clears the
// refusal's error (found on the real bed: it stayed beside PHASE=done).
func TestLostStateWithForeignControlPlaneRefuses(t *testing.T) {
	h := bootMaster(t)
	loseRecord(t, h, "")
	own, err := h.root.ReadFile(CACertFile)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := testCA(t)
	if err := h.root.WriteFile(CACertFile, other, 0o644); err != nil {
		t.Fatal(err)
	}
	calls := len(h.kadm.calls)
	err = h.run()
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "no record of this agent running kubeadm") || !strings.Contains(err.Error(), "kubeadm reset -f") {
		t.Fatalf("err = %v", err)
	}
	if got := h.kadm.calls[calls:]; !slices.Equal(got, []string{"version"}) {
		t.Errorf("kubeadm calls %v", got)
	}
	if h.og.ut(3, vmcontext.KeyPubPhase) != PhaseFailed || !strings.Contains(h.og.ut(3, vmcontext.KeyPubError), "kubeadm reset -f") {
		t.Errorf("refusal not reported: %q", h.og.ut(3, vmcontext.KeyPubError))
	}

	if err := h.root.WriteFile(CACertFile, own, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.run(); err != nil {
		t.Fatalf("the published disk again: %v\n%s", err, h.logs)
	}
	if _, stale := h.og.vms[3].UserTemplate[vmcontext.KeyPubError]; stale || h.og.ut(3, vmcontext.KeyPubPhase) != PhaseDone {
		t.Errorf("adopted: PHASE=%q, the refusal's ERROR still published: %v", h.og.ut(3, vmcontext.KeyPubPhase), stale)
	}
	if got := h.kadm.calls[calls:]; !slices.Equal(got, []string{"version", "version"}) {
		t.Errorf("kubeadm calls %v", got)
	}
}

// TestRecreatedMasterRefuses: `onevm recover --recreate` keeps the VM ID
// and USER_TEMPLATE (a published cluster) and gives a fresh disk. The
// agent refuses to start a second cluster, naming the way out; with
// --new-cluster it clears the stale keys before initializing.
func TestRecreatedMasterRefuses(t *testing.T) {
	h := bootMaster(t)
	oldToken := h.og.ut(3, vmcontext.KeyPubToken)
	fresh := newHarness(t, h.og) // same VM in OneGate, new disk
	err := fresh.run()
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "--new-cluster") || !strings.Contains(err.Error(), "recover --recreate") {
		t.Fatalf("err = %v", err)
	}
	if fresh.kadm.count("init") != 0 || fresh.kadm.count("reset") != 0 {
		t.Errorf("kubeadm calls %v", fresh.kadm.calls)
	}
	if h.og.ut(3, vmcontext.KeyPubToken) != oldToken {
		t.Error("the evidence of the old cluster was changed")
	}

	fresh.opts.NewCluster = true
	erasedBefore := len(h.og.erased)
	if err := fresh.run(); err != nil {
		t.Fatalf("--new-cluster: %v\n%s", err, fresh.logs)
	}
	erased := h.og.erased[erasedBefore:]
	if len(erased) == 0 || erased[0] != vmcontext.KeyReady || !slices.Contains(erased, vmcontext.KeyPubToken) {
		t.Errorf("erased %v, want READY first, then the join keys", erased)
	}
	if fresh.kadm.count("init") != 1 || h.og.ut(3, vmcontext.KeyPubToken) == oldToken || h.og.ut(3, vmcontext.KeyReady) != "YES" {
		t.Errorf("new cluster: init %d, new token %v", fresh.kadm.count("init"), h.og.ut(3, vmcontext.KeyPubToken) != oldToken)
	}
}

// TestReBootstrapAfterReset is the documented way to bootstrap again:
// kubeadm reset, remove the sentinel, start the unit. The stale READY and
// join keys go first, then a fresh init with a fresh token.
func TestReBootstrapAfterReset(t *testing.T) {
	h := bootMaster(t)
	oldToken := h.og.ut(3, vmcontext.KeyPubToken)
	if err := h.kadm.Reset(bounded(t)); err != nil { // the operator's kubeadm reset
		t.Fatal(err)
	}
	if err := h.root.Remove(state.SentinelFile); err != nil {
		t.Fatal(err)
	}
	erasedBefore := len(h.og.erased)
	if err := h.run(); err != nil {
		t.Fatalf("re-bootstrap: %v\n%s", err, h.logs)
	}
	if h.kadm.count("init") != 2 || h.kadm.count("reset") != 1 {
		t.Errorf("kubeadm calls %v, want a second init and only the operator's reset", h.kadm.calls)
	}
	if erased := h.og.erased[erasedBefore:]; len(erased) < 2 || erased[0] != vmcontext.KeyReady {
		t.Errorf("erased %v before the new init", erased)
	}
	if tok := h.og.ut(3, vmcontext.KeyPubToken); tok == oldToken || tok != tokenRE.FindString(h.kadm.configs["init"]) {
		t.Error("not the new cluster's token")
	}
}

// TestWorkerReBootstrapAndRecreate: a reset worker joins again; a
// recreated one (fresh disk, READY=YES still published) clears it first.
func TestWorkerReBootstrapAndRecreate(t *testing.T) {
	og := newService(8, []int{3}, []int{8})
	og.publishMasterData(3, goodToken, goodHash)
	h := newHarness(t, og)
	if err := h.run(); err != nil {
		t.Fatal(err)
	}
	if err := h.kadm.Reset(bounded(t)); err != nil {
		t.Fatal(err)
	}
	_ = h.root.Remove(state.SentinelFile)
	if err := h.run(); err != nil || h.kadm.count("join") != 2 {
		t.Fatalf("re-bootstrap: %v, joins %d\n%s", err, h.kadm.count("join"), h.logs)
	}

	fresh := newHarness(t, og)
	erasedBefore := len(og.erased)
	if err := fresh.run(); err != nil || fresh.kadm.count("join") != 1 {
		t.Fatalf("recreated worker: %v, joins %d", err, fresh.kadm.count("join"))
	}
	if erased := og.erased[erasedBefore:]; len(erased) == 0 || erased[0] != vmcontext.KeyReady {
		t.Errorf("erased %v, want the stale READY first", erased)
	}
}

// TestWorkerWithFilesItDidNotMakeRefuses: a kubelet.conf without a record
// is refused (the way out, kubeadm reset -f, is named), never reset.
func TestWorkerWithFilesItDidNotMakeRefuses(t *testing.T) {
	og := newService(8, []int{3}, []int{8})
	og.publishMasterData(3, goodToken, goodHash)
	h := newHarness(t, og)
	if err := h.root.WriteFile(KubeletConfFile, []byte("kind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := h.run(); !errors.Is(err, ErrRefused) {
		t.Fatalf("err = %v", err)
	}
	if h.kadm.count("reset") != 0 || h.kadm.count("join") != 0 {
		t.Errorf("kubeadm calls %v", h.kadm.calls)
	}
}

// TestTwoAgentsOnOneRoot: a second agent on the same root (a manual run
// while the unit runs) stops before reading anything, and reports nothing.
func TestTwoAgentsOnOneRoot(t *testing.T) {
	h := newHarness(t, newService(3, []int{3}, nil))
	unlock, err := state.Store{Root: h.root}.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	err = h.run()
	if !errors.Is(err, state.ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
	if len(h.og.calls) != 0 || len(h.kadm.calls) != 0 {
		t.Errorf("the second agent acted: OneGate %v, kubeadm %v", h.og.calls, h.kadm.calls)
	}
}

// TestCorruptStatePublishesNothingBad: a version 1 state whose token is
// garbage, with the init config gone, must not publish READY=YES.
func TestCorruptStatePublishesNothingBad(t *testing.T) {
	h := bootMaster(t)
	_ = h.og.EraseVMKey(bounded(t), vmcontext.KeyReady)
	for name, mutate := range map[string]func(){
		"garbage v1 token, no init config": func() {
			_ = h.root.Remove(InitConfigFile)
			_ = h.root.WriteFile(state.StateFile, []byte(`{"version":1,"vmid":3,"role":"init","completed":["kubeadm-init"],"token":"garbage"}`), 0o600)
		},
		"garbage token in the init config": func() {
			_ = h.root.WriteFile(InitConfigFile, []byte("kind: InitConfiguration\nbootstrapTokens:\n- token: garbage\n"), 0o600)
			_ = h.root.WriteFile(state.StateFile, []byte(`{"version":2,"vmid":3,"role":"init","completed":["kubeadm-init"]}`), 0o600)
		},
	} {
		_ = h.root.Remove(state.SentinelFile)
		mutate()
		err := h.run()
		if err == nil || !strings.Contains(err.Error(), "token") {
			t.Errorf("%s: err = %v", name, err)
		}
		if h.og.ut(3, vmcontext.KeyReady) == "YES" {
			t.Errorf("%s: READY=YES published", name)
		}
	}
}

// TestStaleReadyWhereEraseFails: on a OneGate whose erase is broken (5.12)
// the stale READY=YES is overwritten with NO before the new attempt.
func TestStaleReadyWhereEraseFails(t *testing.T) {
	og := newService(8, []int{3}, []int{8})
	og.publishMasterData(3, goodToken, goodHash)
	og.vms[8].UserTemplate[vmcontext.KeyReady] = "YES" // from the VM's previous disk
	og.fail = func(op string, n int) error {
		if op == "EraseVMKey" {
			return Retryable(errors.New("onegate: PUT /vm: 500 Internal Server Error"))
		}
		return nil
	}
	h := newHarness(t, og)
	if err := h.run(); err != nil {
		t.Fatalf("%v\n%s", err, h.logs)
	}
	var sawNo bool
	for _, u := range og.updates {
		if len(u) == 1 && u[0].Key == vmcontext.KeyReady && u[0].Value == "NO" {
			sawNo = true
		}
		if sawNo {
			break
		}
	}
	if !sawNo || og.ut(8, vmcontext.KeyReady) != "YES" || h.kadm.count("join") != 1 {
		t.Errorf("READY=NO sent %v, READY now %q, joins %d", sawNo, og.ut(8, vmcontext.KeyReady), h.kadm.count("join"))
	}
}

// TestInterruptedJoinResetsBeforeWaitingForAToken: a join cut short
// after kubelet-start leaves an enabled kubelet that finishes its TLS
// bootstrap at the next boot and keeps its Node Ready, and serve then
// publishes no token (the VM has a live Node). The next run must undo its
// own attempt before it waits for a token, or it waits forever (the real
// bed's power cut mid-join, TestAgentRealCloud, hung 13 minutes so).
func TestInterruptedJoinResetsBeforeWaitingForAToken(t *testing.T) {
	og := newService(8, []int{3}, []int{8})
	og.publishMasterData(3, goodToken, goodHash)
	h := newHarness(t, og)
	h.kadm.joinErr = []error{errors.New("power cut")}
	if err := h.run(); err == nil {
		t.Fatal("the interrupted join succeeded")
	}
	if err := h.root.WriteFile(KubeletConfFile, []byte("kind: Config\n"), 0o600); err != nil { // the kubelet's own bootstrap, at boot
		t.Fatal(err)
	}
	og.mu.Lock()
	delete(og.vms[3].UserTemplate, vmcontext.KeyPubToken) // serve withholds it
	og.mu.Unlock()
	_ = h.run() // waits for a token that does not come, until its bound
	if n := h.kadm.count("reset"); n != 1 || h.kadm.calls[len(h.kadm.calls)-1] != "reset" {
		t.Fatalf("kubeadm calls %v: the leftover join was not reset before waiting for a token\n%s", h.kadm.calls, h.logs)
	}
	if ok, _ := h.root.Exists(KubeletConfFile); ok {
		t.Error("the leftover kubelet.conf survived the reset")
	}
}
