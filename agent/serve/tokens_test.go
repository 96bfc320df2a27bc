package serve

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/system/systemtest"
	"github.com/onekube/onekube/agent/testbed/loopback"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

func addNode(t *testing.T, cs kubernetes.Interface, name string, vmid int) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{kubeadm.LabelVMID: strconv.Itoa(vmid)}}}
	if _, err := cs.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func tokenSecrets(t *testing.T, cs kubernetes.Interface) []kubeadm.OwnedToken {
	t.Helper()
	toks, err := ownedTokens(context.Background(), cs)
	if err != nil {
		t.Fatal(err)
	}
	return toks
}

func mustTick(t *testing.T, l Loop) time.Duration {
	t.Helper()
	next, err := l.Tick(context.Background())
	if err != nil {
		t.Fatalf("%s tick: %v", l.Name(), err)
	}
	return next
}

// The life of a join token against a real API server: minted when a VM
// waits, kept while it is fresh, replaced (the old one kept until it
// expires) before the worker's margin, and every one deleted once the VM
// has its Node; kubeadm init's token is adopted; an admin's token is never
// touched; failed and leaving VMs wait for nothing.
func TestTokensLifecycle(t *testing.T) {
	s := loopback.Start(t, loopback.Options{})
	cs := s.Client(t)
	ctx := context.Background()
	clock := systemtest.NewClock(time.Now().Truncate(time.Second))

	// kubeadm init's token (onekube's description) and an admin's.
	initTok, _ := kubeadm.TokenSecret(vmcontext.NewSecret("init00.0123456789abcdef"), clock.Now().Add(time.Hour))
	adminTok, _ := kubeadm.TokenSecret(vmcontext.NewSecret("admin0.0123456789abcdef"), clock.Now().Add(time.Hour))
	adminTok.Data["description"] = []byte("made by an admin")
	for _, sec := range []*corev1.Secret{initTok, adminTok} {
		if _, err := cs.CoreV1().Secrets("kube-system").Create(ctx, sec, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	og := newFakeService(10)
	og.add("master", 10, nil)
	addNode(t, cs, "master-10", 10)
	og.state = onegate.ServiceDeploying
	// Worker 11 waits past an hour here: the wait limit is not this
	// test's subject (TestTokensWaitLimit).
	tk := &Tokens{OneGate: og, Client: cs, Clock: clock, WaitLimit: 24 * time.Hour}

	// Deploying, nobody waits yet: init's token is kept, ticks are fast.
	if next := mustTick(t, tk); next != DefaultTokensFast {
		t.Errorf("next tick %s while deploying", next)
	}
	if toks := tokenSecrets(t, cs); len(toks) != 1 || toks[0].ID != "init00" {
		t.Fatalf("tokens while deploying: %+v", toks)
	}

	// A worker boots: init's token (an hour left) serves it.
	og.add("worker", 11, nil)
	og.set(func(f *fakeService) { f.state = onegate.ServiceRunning })
	mustTick(t, tk)
	if rep := tk.report; len(rep.Waiting) != 1 || rep.Waiting[0] != 11 || !rep.TokenExpires.Equal(clock.Now().Add(time.Hour).UTC()) {
		t.Fatalf("report %+v", rep)
	}
	if toks := tokenSecrets(t, cs); len(toks) != 1 {
		t.Fatalf("minted although init's token was fresh: %d tokens", len(toks))
	}
	if got := og.ut(10, vmcontext.KeyPubWaiting); got != "11" {
		t.Errorf("ONEGATE_K8S_WAITING = %q", got)
	}

	// 35 minutes on, 25 left (< 30): a fresh token; init's stays until it expires.
	clock.Advance(35 * time.Minute)
	next := mustTick(t, tk)
	toks := tokenSecrets(t, cs)
	if len(toks) != 2 || toks[0].ID == "init00" || toks[1].ID != "init00" {
		t.Fatalf("after refresh: %+v", toks)
	}
	if want := clock.Now().Add(time.Hour); !toks[0].Expires.Equal(want) {
		t.Errorf("fresh token expires %s, want %s", toks[0].Expires, want)
	}
	if next != DefaultTokensFast {
		t.Errorf("next %s while a VM waits", next)
	}

	// Another 30 minutes: init's expired and is deleted; ours (30 left) is
	// exactly at the refresh point and is replaced.
	clock.Advance(30 * time.Minute)
	mustTick(t, tk)
	toks = tokenSecrets(t, cs)
	if len(toks) != 2 {
		t.Fatalf("tokens: %+v", toks)
	}
	for _, x := range toks {
		if x.ID == "init00" {
			t.Error("the expired init token was kept")
		}
	}

	// A failed VM and a leaving one wait for nothing, and say why.
	og.add("worker", 12, map[string]string{vmcontext.KeyPubPhase: "failed"})
	og.add("worker", 13, nil)
	og.set(func(f *fakeService) { f.vms[13].LCMState = onegate.LCMShutdown })
	addNode(t, cs, "worker-11", 11)
	clock.Advance(time.Second)
	// Nobody waits: the tokens are retired (no longer handed out, so the
	// publish loops erase them from OneGate) but their Secrets stay for
	// the grace, for a worker that read one a moment ago.
	if next := mustTick(t, tk); next != min(DefaultTokensIdle, DefaultRetireGrace) {
		t.Errorf("next %s after retiring", next)
	}
	toks = tokenSecrets(t, cs)
	if len(toks) != 2 {
		t.Fatalf("retired tokens deleted at once: %d left", len(toks))
	}
	for _, x := range toks {
		if !x.Retired.Equal(clock.Now().Truncate(time.Second)) {
			t.Errorf("token %s retired at %s, want now", x.ID, x.Retired)
		}
	}
	if _, ok := current(toks, clock.Now()); ok {
		t.Error("a retired token is still handed out")
	}
	// A VM that starts waiting within the grace gets the token back.
	og.add("worker", 14, nil)
	mustTick(t, tk)
	if toks = tokenSecrets(t, cs); len(toks) != 2 || !toks[0].Retired.IsZero() {
		t.Fatalf("a waiting VM did not revive the retired token: %+v", toks)
	}
	addNode(t, cs, "worker-14", 14)
	clock.Advance(time.Second)
	mustTick(t, tk) // retired again
	clock.Advance(DefaultRetireGrace)
	if next := mustTick(t, tk); next != DefaultTokensIdle {
		t.Errorf("next %s when nobody waits", next)
	}
	if toks := tokenSecrets(t, cs); len(toks) != 0 {
		t.Errorf("nobody waited for the whole grace but %d tokens remain", len(toks))
	}
	if _, shown := og.vms[10].UserTemplate[vmcontext.KeyPubWaiting]; shown {
		t.Error("ONEGATE_K8S_WAITING stayed after the last VM joined")
	}
	nw := tk.report.NotWaiting
	if !strings.Contains(nw["12"], "PHASE=failed") || !strings.Contains(nw["13"], "shutting down") || len(tk.report.Waiting) != 0 {
		t.Errorf("report %+v", tk.report)
	}
	if _, err := cs.CoreV1().Secrets("kube-system").Get(ctx, adminTok.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the admin's token was touched: %v", err)
	}

	// Idle: one GET /service per tick, and each VM without a Node is read
	// at most once a VerdictAge.
	before := og.count("GetVMByID")
	for range 5 {
		clock.Advance(DefaultTokensIdle)
		mustTick(t, tk)
	}
	if got := og.count("GetVMByID") - before; got != 4 { // VMs 12 and 13, read again at 60 s and 120 s
		t.Errorf("%d GET /vms/:id over 150 s for 2 VMs without a Node, want 4", got)
	}
	if got := og.count("GetService"); got != 13 {
		t.Errorf("%d GET /service in 13 ticks", got)
	}
}

// A worker bootstrapping again over its own earlier Node (kubeadm reset
// and a restart, or a recreated disk) waits for a token although its Node
// exists and the earlier boot's READY=YES is still published: once the
// node controller marks the kubelet silent, its published phase decides.
// A Node whose kubelet reports, Ready or not, is never read.
func TestTokensServeAWorkerBootstrappingAgain(t *testing.T) {
	s := loopback.Start(t, loopback.Options{})
	cs := s.Client(t)
	ctx := context.Background()
	clock := systemtest.NewClock(time.Now().Truncate(time.Second))
	og := newFakeService(10)
	og.state = onegate.ServiceRunning
	og.add("master", 10, nil)
	addNode(t, cs, "master-10", 10)
	joined := map[string]string{vmcontext.KeyReady: "YES", vmcontext.KeyPubPhase: "done"}
	og.add("worker", 11, joined)
	og.add("worker", 12, joined)
	setReady := func(name string, vmid int, st corev1.ConditionStatus) {
		t.Helper()
		addNode(t, cs, name, vmid)
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}
		if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setReady("worker-11", 11, corev1.ConditionUnknown) // kubelet stopped by kubeadm reset
	setReady("worker-12", 12, corev1.ConditionFalse)   // alive, waiting for its CNI
	tk := &Tokens{OneGate: og, Client: cs, Clock: clock}

	mustTick(t, tk)
	if rep := tk.report; len(rep.Waiting) != 0 || rep.NotWaiting["11"] == "" || rep.NotWaiting["12"] != "" {
		t.Fatalf("before the agent runs again: %+v", rep)
	}
	reads := og.vmReads(12)

	og.set(func(f *fakeService) { f.vms[11].UserTemplate[vmcontext.KeyPubPhase] = "wait-master" })
	clock.Advance(DefaultVerdictAge)
	mustTick(t, tk)
	if rep := tk.report; len(rep.Waiting) != 1 || rep.Waiting[0] != 11 || rep.Tokens != 1 {
		t.Fatalf("worker 11 bootstrapping again: %+v", rep)
	}
	if og.vmReads(12) != reads {
		t.Error("read the VM of a Node whose kubelet reports")
	}
}
