package serve_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/onekube/onekube/agent/serve"
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
	// trying every RetryPeriod.
	if d := first.cancelledAt.Sub(*renewFailedAt.Load()); d > timings.RenewDeadline+timings.RetryPeriod+time.Second {
		t.Errorf("the tick's context ended %s after renewals began failing", d)
	}
	if first.lastEnd.IsZero() {
		t.Error("Run returned while the first term's tick still ran")
	} else if second.firstStart.Before(first.lastEnd) {
		t.Errorf("the second term's tick started at %s, %s before the first term's tick returned",
			second.firstStart.Format(time.StampMilli), first.lastEnd.Sub(second.firstStart))
	}
}
