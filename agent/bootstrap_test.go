package agent

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/state"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

var tokenRE = regexp.MustCompile(`[a-z0-9]{6}\.[a-z0-9]{16}`)

func kvMap(kvs []onegate.KV) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestMasterBootstrap(t *testing.T) {
	og := newService(3, []int{3, 5}, []int{8})
	h := newHarness(t, og)
	if err := h.run(); err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, h.logs)
	}
	if n := h.kadm.count("init"); n != 1 {
		t.Fatalf("kubeadm init ran %d times, want 1", n)
	}
	cfgToken := tokenRE.FindString(h.kadm.configs["init"])
	if cfgToken == "" {
		t.Fatalf("init config has no bootstrap token:\n%s", h.kadm.configs["init"])
	}
	ready := og.readyUpdates()
	if len(ready) != 1 {
		t.Fatalf("%d updates carried READY, want 1", len(ready))
	}
	pub := kvMap(ready[0])
	caHash, err := kubeadm.CACertHash(h.kadm.caPEM)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		vmcontext.KeyPubMaster:   "10.0.0.13",
		vmcontext.KeyPubPort:     "6443",
		vmcontext.KeyPubToken:    cfgToken,
		vmcontext.KeyPubHash:     caHash,
		vmcontext.KeyPubNodeName: "node-3",
		vmcontext.KeyPubPhase:    PhaseDone,
		vmcontext.KeyReady:       "YES",
	}
	for k, v := range want {
		if pub[k] != v {
			t.Errorf("published %s = %q, want %q", k, pub[k], v)
		}
	}
	// One report per long phase before the final publish, in order, each
	// with the time the master expects to publish (the harness's clock
	// does not move unless something sleeps).
	var phases []string
	for _, u := range og.updates {
		m := kvMap(u)
		if _, ok := m[vmcontext.KeyReady]; ok || m[vmcontext.KeyPubPhase] == "" {
			continue
		}
		phases = append(phases, m[vmcontext.KeyPubPhase])
		if want := testEpoch.Add(DefaultInitEstimate + afterInitWork).UTC().Format(time.RFC3339); m[vmcontext.KeyPubETA] != want {
			t.Errorf("phase %s: %s = %q, want %q", m[vmcontext.KeyPubPhase], vmcontext.KeyPubETA, m[vmcontext.KeyPubETA], want)
		}
	}
	wantPhases := []string{PhaseToken, PhaseKubeadmInit}
	if strings.Join(phases, ",") != strings.Join(wantPhases, ",") {
		t.Errorf("phases reported %v, want %v", phases, wantPhases)
	}
	// The hostname agrees with the node name, which resolves locally.
	for _, f := range []string{system.KernelHostnameFile, system.EtcHostname} {
		if b, _ := h.root.ReadFile(f); string(b) != "node-3\n" {
			t.Errorf("%s = %q, want node-3", f, b)
		}
	}
	if b, _ := h.root.ReadFile(EtcHosts); !strings.Contains(string(b), "10.0.0.13\tnode-3\t") {
		t.Errorf("/etc/hosts:\n%s", b)
	}
	assertFileMode(t, h.root, InitConfigFile, 0o600)
	assertFileMode(t, h.root, state.StateFile, 0o600)
	assertFileMode(t, h.root, state.Dir, 0o700|os.ModeDir)
	if ok, _ := h.root.Exists(state.SentinelFile); !ok {
		t.Error("no sentinel after success")
	}
	if strings.Contains(h.logs.String(), cfgToken) || strings.Contains(h.logs.String(), testOneGateToken) {
		t.Errorf("a token leaked into the logs:\n%s", h.logs)
	}

	// A second run does nothing: no kubeadm, no OneGate.
	calls, updates := len(h.kadm.calls), len(og.updates)
	if err := h.run(); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if len(h.kadm.calls) != calls || len(og.updates) != updates {
		t.Errorf("second run called kubeadm %d times and OneGate %d times, want none", len(h.kadm.calls)-calls, len(og.updates)-updates)
	}
}

func assertFileMode(t *testing.T, root system.Root, p string, want os.FileMode) {
	t.Helper()
	st, err := os.Stat(root.Path(p))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode() != want {
		t.Errorf("%s mode = %v, want %v", p, st.Mode(), want)
	}
}

func TestWorkerJoinsWhenMasterReady(t *testing.T) {
	og := newService(8, []int{5, 3}, []int{8, 9})
	const tok = "abcdef.0123456789abcdef"
	hash := strings.Repeat("ab", 32)
	// The master publishes after three polls; the worker must wait.
	og.beforeGetVMByID = func(f *fakeOneGate, id, n int) {
		if n == 3 {
			f.publishMasterData(3, tok, "sha256:"+strings.ToUpper(hash))
		}
	}
	h := newHarness(t, og)
	if err := h.run(); err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, h.logs)
	}
	if h.kadm.count("join") != 1 || h.kadm.count("init") != 0 {
		t.Fatalf("kubeadm calls %v, want one join", h.kadm.calls)
	}
	cfg := h.kadm.configs["join"]
	for _, want := range []string{tok, "sha256:" + hash, "10.0.0.13:6443", "node-8", "10.0.0.18"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("join config lacks %q:\n%s", want, cfg)
		}
	}
	if og.calls["GetService"] != 1 {
		t.Errorf("GET /service %d times, want 1", og.calls["GetService"])
	}
	// Round 1 polls master 3 then 5 (lowest first); round 2 finds 3 ready
	// and reads 5 once more, for the local balancer's other backends.
	if og.calls["GetVMByID"] != 4 {
		t.Errorf("GET /vms/:id %d times, want 4", og.calls["GetVMByID"])
	}
	if got := og.ut(8, vmcontext.KeyReady); got != "YES" {
		t.Errorf("worker READY = %q", got)
	}
	if got := og.ut(8, vmcontext.KeyPubToken); got != "" {
		t.Errorf("worker published a token")
	}
	if len(h.clock.Slept) != 1 {
		t.Errorf("slept %v, want one backoff wait", h.clock.Slept)
	}
	if ok, _ := h.root.Exists(JoinConfigFile); ok {
		t.Error("the join config, which holds the token, outlived the join")
	}
	if strings.Contains(h.logs.String(), tok) {
		t.Errorf("join token leaked into the logs")
	}
}

func TestWorkerMasterNeverPublishes(t *testing.T) {
	og := newService(8, []int{3}, []int{8})
	h := newHarness(t, og)
	err := h.run()
	if !errors.Is(err, ErrMasterTimeout) {
		t.Fatalf("err = %v, want ErrMasterTimeout", err)
	}
	if !strings.Contains(err.Error(), "master VMs 3") || !strings.Contains(err.Error(), "not READY yet") {
		t.Errorf("deadline error does not say which master or what was missing: %v", err)
	}
	if elapsed := h.clock.Now().Sub(testEpoch); elapsed < 30*time.Minute || elapsed > 31*time.Minute {
		t.Errorf("gave up after %s of fake time, want the 30m deadline", elapsed)
	}
	for _, d := range h.clock.Slept {
		if d > h.tun.MaxPollInterval+h.tun.MaxPollInterval/2 {
			t.Errorf("backoff %s exceeds the cap", d)
		}
	}
	if og.ut(8, vmcontext.KeyReady) != "" {
		t.Error("READY reported on failure")
	}
	if got := og.ut(8, vmcontext.KeyPubPhase); got != PhaseFailed {
		t.Errorf("phase = %q, want failed", got)
	}
	if got := og.ut(8, vmcontext.KeyPubError); !strings.Contains(got, "timed out waiting for the master") || strings.ContainsAny(got, "\",[]\\\n") {
		t.Errorf("ONEGATE_K8S_ERROR = %q", got)
	}
	if h.kadm.count("join") != 0 {
		t.Error("joined without a master")
	}
	if ok, _ := h.root.Exists(state.SentinelFile); ok {
		t.Error("sentinel written on failure")
	}
}

func TestWorkerRejectsMalformedMasterData(t *testing.T) {
	og := newService(8, []int{3}, []int{8})
	og.publishMasterData(3, "NOT-A-TOKEN-secretvalue", "sha256:xyz")
	og.vms[3].UserTemplate[vmcontext.KeyPubMaster] = "10.0.0.10:6443"
	h := newHarness(t, og)
	h.tun.MasterTimeout = 10 * time.Minute
	err := h.run()
	if !errors.Is(err, ErrMasterTimeout) {
		t.Fatalf("err = %v, want ErrMasterTimeout", err)
	}
	for _, k := range []string{vmcontext.KeyPubToken, vmcontext.KeyPubHash, vmcontext.KeyPubMaster} {
		if !strings.Contains(err.Error(), k) {
			t.Errorf("error does not name %s: %v", k, err)
		}
	}
	if strings.Contains(err.Error(), "secretvalue") {
		t.Errorf("error echoes a published value: %v", err)
	}
}

func TestUnauthorizedStopsAtOnce(t *testing.T) {
	og := newService(8, []int{3}, []int{8})
	og.fail = func(op string, n int) error {
		return ErrUnauthorized
	}
	h := newHarness(t, og)
	err := h.run()
	if !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("err = %v, want ErrUnauthorized", err)
	}
	if og.calls["GetVM"] != 1 || len(h.clock.Slept) != 0 {
		t.Errorf("retried a 401: %d GETs, slept %v", og.calls["GetVM"], h.clock.Slept)
	}
	if !strings.Contains(err.Error(), "phase discover") {
		t.Errorf("error does not name the phase: %v", err)
	}
}

func TestRidesThroughOneGateFailures(t *testing.T) {
	og := newService(3, []int{3}, nil)
	og.fail = func(op string, n int) error {
		if op != "EraseVMKey" && n <= 3 {
			return Retryable(errors.New("503 Service Unavailable"))
		}
		return nil
	}
	h := newHarness(t, og)
	if err := h.run(); err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, h.logs)
	}
	if og.ut(3, vmcontext.KeyReady) != "YES" {
		t.Error("not READY after OneGate recovered")
	}
}

func TestResumeAfterCrashBeforePublish(t *testing.T) {
	og := newService(3, []int{3}, nil)
	h := newHarness(t, og)
	// Crash: publishing fails hard, after kubeadm init succeeded (the
	// updates before it: the token and kubeadm-init phases).
	og.fail = func(op string, n int) error {
		if op == "UpdateVM" && n >= 3 {
			return errors.New("connection reset")
		}
		return nil
	}
	if err := h.run(); err == nil {
		t.Fatal("first run succeeded despite the failed publish")
	}
	st, err := state.Store{Root: h.root}.Load()
	if err != nil || !st.Done(PhaseKubeadmInit) {
		t.Fatalf("state after crash: %+v, %v", st, err)
	}
	og.fail = nil
	if err := h.run(); err != nil {
		t.Fatalf("rerun: %v\n%s", err, h.logs)
	}
	if n := h.kadm.count("init"); n != 1 {
		t.Errorf("kubeadm init ran %d times, want 1", n)
	}
	if h.kadm.count("reset") != 0 {
		t.Error("reset a node whose init succeeded")
	}
	cfgToken := tokenRE.FindString(h.kadm.configs["init"])
	if got := og.ut(3, vmcontext.KeyPubToken); got != cfgToken {
		t.Errorf("republished token differs from the cluster's")
	}
	// The failure report itself was lost with the connection, so there is
	// no stale error to erase: only keys the VM holds are erased (an
	// absent one costs a 500 that 7.2+ cannot tell from a fault).
	if _, stale := og.vms[3].UserTemplate[vmcontext.KeyPubError]; stale || len(og.erased) != 0 {
		t.Errorf("erased %v; stale error left: %v", og.erased, stale)
	}
}

func TestFailedJoinResetsBeforeRetry(t *testing.T) {
	og := newService(8, []int{3}, []int{8})
	og.publishMasterData(3, "abcdef.0123456789abcdef", strings.Repeat("0f", 32))
	h := newHarness(t, og)
	h.kadm.joinErr = []error{errors.New("kubeadm join: exit status 1: preflight failed")}
	if err := h.run(); err == nil {
		t.Fatal("failed join reported success")
	}
	if og.ut(8, vmcontext.KeyReady) != "" {
		t.Error("READY after a failed join")
	}
	if err := h.run(); err != nil {
		t.Fatalf("rerun: %v\n%s", err, h.logs)
	}
	want := []string{"version", "join", "version", "reset", "join"}
	if strings.Join(h.kadm.calls, ",") != strings.Join(want, ",") {
		t.Errorf("kubeadm calls %v, want %v", h.kadm.calls, want)
	}
	if og.ut(8, vmcontext.KeyPubError) != "" || og.ut(8, vmcontext.KeyReady) != "YES" {
		t.Errorf("after recovery: error %q, ready %q", og.ut(8, vmcontext.KeyPubError), og.ut(8, vmcontext.KeyReady))
	}
}

// TestInitRefusesFilesItDidNotMake: kubeadm's files without a record of
// this agent's attempt may be a live control plane: refused, never reset.
func TestInitRefusesFilesItDidNotMake(t *testing.T) {
	og := newService(3, []int{3}, nil)
	h := newHarness(t, og)
	if err := h.root.WriteFile(AdminConfFile, []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := h.run()
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "kubeadm reset -f") {
		t.Fatalf("err = %v, want ErrRefused naming the way out", err)
	}
	if strings.Join(h.kadm.calls, ",") != "version" {
		t.Errorf("kubeadm calls %v, want none but version", h.kadm.calls)
	}
}

// TestNotInService: a VM the service document does not list stops before
// anything; a ROLE_NAME erased by a sibling changes nothing, the document
// names the role (TestServiceIDIsAClaim has the other cases).
func TestNotInService(t *testing.T) {
	og := newService(3, []int{3}, nil)
	og.service.Roles[0].Nodes = nil
	og.service.Roles[1].Nodes = []onegate.Node{{VMID: 4}}
	h := newHarness(t, og)
	if err := h.run(); !errors.Is(err, ErrNotInService) {
		t.Fatalf("err = %v, want ErrNotInService", err)
	}

	og = newService(3, []int{3}, nil)
	delete(og.vms[3].UserTemplate, vmcontext.KeyRoleName)
	h = newHarness(t, og)
	if err := h.run(); err != nil || h.kadm.count("init") != 1 {
		t.Fatalf("ROLE_NAME erased: err = %v, init %d times", err, h.kadm.count("init"))
	}
}

func TestBadSettingsAreReported(t *testing.T) {
	og := newService(3, []int{3}, nil)
	h := newHarness(t, og)
	h.resolveErr = errors.New("ONEAPP_K8S_PODS_NETWORK: not a CIDR")
	err := h.run()
	if err == nil || !strings.Contains(err.Error(), "ONEAPP_K8S_PODS_NETWORK") {
		t.Fatalf("err = %v", err)
	}
	if og.ut(3, vmcontext.KeyPubPhase) != PhaseFailed {
		t.Error("settings error not reported to OneGate")
	}
}

func TestStateOfAnotherVMIsRefused(t *testing.T) {
	og := newService(3, []int{3}, nil)
	h := newHarness(t, og)
	if err := (state.Store{Root: h.root}).Save(&state.State{VMID: 99, Role: "worker"}); err != nil {
		t.Fatal(err)
	}
	if err := h.run(); err == nil || !strings.Contains(err.Error(), "belongs to VM 99") {
		t.Fatalf("err = %v", err)
	}
}
