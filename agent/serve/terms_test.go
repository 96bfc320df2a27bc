package serve_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"filippo.io/age"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/onekube/onekube/agent/certgrant"
	"github.com/onekube/onekube/agent/serve"
	"github.com/onekube/onekube/agent/system/systemtest"
	vmcontext "github.com/onekube/onekube/context"
)

// flakyLeases is a fake clientset whose Lease updates fail while fail is
// set: the acting master cannot renew, as when its API server loses etcd.
func flakyLeases() (*fake.Clientset, *atomic.Bool) {
	cs := fake.NewClientset()
	fail := &atomic.Bool{}
	cs.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if fail.Load() {
			return true, nil, errors.New("etcdserver: request timed out")
		}
		return false, nil, nil
	})
	return cs, fail
}

// termTick records a leader loop's ticks per term (a term is one tick
// context). The first term's tick blocks until its context ends, then
// goes on for hold regardless (a call that does not honour its context),
// outliving the lease.
type termTick struct {
	hold     time.Duration
	onCancel func()

	mu      sync.Mutex
	running int
	peak    int
	terms   []*termSeen
}

type termSeen struct {
	ctx         context.Context
	firstStart  time.Time
	lastEnd     time.Time
	cancelledAt time.Time
}

func (l *termTick) Name() string { return "slow" }

func (l *termTick) Tick(ctx context.Context) (time.Duration, error) {
	l.mu.Lock()
	l.running++
	l.peak = max(l.peak, l.running)
	var cur *termSeen
	if n := len(l.terms); n > 0 && l.terms[n-1].ctx == ctx {
		cur = l.terms[n-1]
	} else {
		cur = &termSeen{ctx: ctx, firstStart: time.Now()}
		l.terms = append(l.terms, cur)
	}
	first := len(l.terms) == 1
	l.mu.Unlock()
	if first {
		select {
		case <-ctx.Done():
			l.mu.Lock()
			cur.cancelledAt = time.Now()
			l.mu.Unlock()
			l.onCancel()
		case <-time.After(20 * time.Second):
		}
		time.Sleep(l.hold)
	}
	l.mu.Lock()
	l.running--
	cur.lastEnd = time.Now()
	l.mu.Unlock()
	return 10 * time.Millisecond, nil
}

func (l *termTick) seen() []termSeen {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]termSeen, len(l.terms))
	for i, t := range l.terms {
		out[i] = *t
	}
	return out
}

// TestLeaderTermsNeverOverlap: with client-go's leader election, a term
// ends when the lease cannot be renewed; the tick of that term has its
// context cancelled, and the next term (the lease won back at once: the
// same identity holds it) starts only after that tick returned, even when
// it returns long after the lease is gone.
func TestLeaderTermsNeverOverlap(t *testing.T) {
	t.Parallel()
	cs, failRenew := flakyLeases()
	timings := serve.LeaseTimings{LeaseDuration: time.Second, RenewDeadline: 500 * time.Millisecond, RetryPeriod: 100 * time.Millisecond}
	var renewFailedAt atomic.Pointer[time.Time]
	loop := &termTick{hold: 2 * timings.LeaseDuration, onCancel: func() { failRenew.Store(false) }}
	r := &serve.Runner{
		Loops:   []serve.Spec{{Loop: loop, LeaderOnly: true}},
		Elector: &serve.LeaseElector{Client: cs, ID: "master-1", Timings: timings},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	waitFor(t, 10*time.Second, func() bool { return len(loop.seen()) == 1 })
	now := time.Now()
	renewFailedAt.Store(&now)
	failRenew.Store(true)
	waitFor(t, 20*time.Second, func() bool { return len(loop.seen()) >= 2 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	terms := loop.seen()
	if loop.peak != 1 {
		t.Errorf("peak concurrent ticks = %d, want 1", loop.peak)
	}
	first, second := terms[0], terms[1]
	if first.cancelledAt.IsZero() {
		t.Fatal("the first term's tick context was never cancelled")
	}
	// client-go gives the lease up RenewDeadline after the last renewal,
	// trying every RetryPeriod (0.6 s here); the rest is slack for a
	// loaded machine.
	if d := first.cancelledAt.Sub(*renewFailedAt.Load()); d > timings.RenewDeadline+timings.RetryPeriod+4*time.Second {
		t.Errorf("the tick's context ended %s after renewals began failing", d)
	}
	if first.lastEnd.IsZero() {
		t.Error("Run returned while the first term's tick still ran")
	} else if second.firstStart.Before(first.lastEnd) {
		t.Errorf("the second term's tick started at %s, %s before the first term's tick returned",
			second.firstStart.Format(time.StampMilli), first.lastEnd.Sub(second.firstStart))
	}
}

// handElector gives terms on the test's word: each channel received on
// starts a term, which ends when that channel is closed. Like client-go,
// it does not wait for a term's lead to return.
type handElector struct{ terms chan chan struct{} }

func (e *handElector) Identity() string { return "master-10" }

func (e *handElector) Run(ctx context.Context, lead func(context.Context), _ func(string)) {
	for {
		select {
		case <-ctx.Done():
			return
		case ended := <-e.terms:
			term, cancel := context.WithCancel(ctx)
			go lead(term)
			go func() {
				defer cancel()
				select {
				case <-ended:
				case <-ctx.Done():
				}
			}()
		}
	}
}

// grantKey waits for this master's grant to VM vmid and opens it.
func grantKey(t *testing.T, g *masterGate, vmid int, ident *age.X25519Identity) string {
	t.Helper()
	var gr certgrant.Grant
	waitFor(t, 20*time.Second, func() bool {
		var err error
		gr, err = certgrant.Parse(g.get(10, vmcontext.KeyPubCertKey))
		return err == nil && gr.VMID == vmid
	})
	p, err := gr.Open(ident)
	if err != nil {
		t.Fatal(err)
	}
	return p.CertificateKey.Reveal()
}

// TestCertificateKeyDroppedPerTerm: the certificate key the control-plane
// loop knows is the term's. In between terms another master may have
// acted and uploaded kubeadm-certs again under its own key, which the
// cached one no longer decrypts; so a later term uploads afresh before
// its first grant, and kubeadm init's key serves the first term only.
func TestCertificateKeyDroppedPerTerm(t *testing.T) {
	t.Parallel()
	g := newMasterGate(10, 10, 11, 12)
	g.set(10, vmcontext.KeyReady, "YES")
	rec := &recorder{}
	clock := systemtest.NewClock(time.Now())
	initKey := strings.Repeat("cd", 32)
	// Each joining master presents its recipient at its own address, as
	// the grant now requires (grantaddr_test.go).
	n := newVMNet()
	cp := &serve.ControlPlane{OneGate: g, Client: fake.NewClientset(), Uploader: rec, Clock: clock, Self: 10, MasterRole: "master",
		InitKey: func() (vmcontext.Secret, time.Time, bool) { return vmcontext.NewSecret(initKey), clock.Now(), true }, Dial: n.dial}
	present := func(vmid int, id *age.X25519Identity) {
		n.present(t, fmt.Sprintf("10.0.0.%d", vmid), certgrant.Presentation{VMID: vmid, Recipient: id.Recipient().String()})
	}
	e := &handElector{terms: make(chan chan struct{})}
	board := serve.NewStatusBoard("")
	r := &serve.Runner{Loops: []serve.Spec{{Loop: cp, LeaderOnly: true}}, Elector: e, Status: board}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()

	id11 := joinRequest(t, g, 11)
	present(11, id11)
	end1 := make(chan struct{})
	e.terms <- end1
	first := grantKey(t, g, 11, id11)
	close(end1)
	waitFor(t, 10*time.Second, func() bool { return !board.Acting() })

	// VM 11 joined; VM 12 asks, in a second term.
	g.set(11, vmcontext.KeyReady, "YES")
	id12 := joinRequest(t, g, 12)
	present(12, id12)
	end2 := make(chan struct{})
	e.terms <- end2
	second := grantKey(t, g, 12, id12)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	if first != initKey {
		t.Error("the first term did not hand out kubeadm init's key")
	}
	if len(rec.uploads) != 1 || second != rec.uploads[0] {
		t.Errorf("the second term granted a key it did not upload (%d uploads; init's key: %v)", len(rec.uploads), second == initKey)
	}
}
