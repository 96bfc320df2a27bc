package serve_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/serve"
	"github.com/onekube/onekube/agent/testbed/loopback"
)

// Two masters campaign through a real API server: one acts at a time, and
// when the acting one stops, the other takes over within the lease
// duration.
func TestLeaseElectorOneActsAtATime(t *testing.T) {
	s := loopback.Start(t, loopback.Options{})
	cs := s.Client(t)
	timings := serve.LeaseTimings{LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 200 * time.Millisecond}
	var acting atomic.Int32
	var overlap atomic.Bool
	var mu sync.Mutex
	var terms []string

	run := func(ctx context.Context, id string) {
		e := &serve.LeaseElector{Client: cs, ID: id, Timings: timings}
		e.Run(ctx, func(term context.Context) {
			if acting.Add(1) > 1 {
				overlap.Store(true)
			}
			mu.Lock()
			terms = append(terms, id)
			mu.Unlock()
			<-term.Done()
			acting.Add(-1)
		}, func(string) {})
	}
	ctxA, stopA := context.WithCancel(context.Background())
	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	var wg sync.WaitGroup
	wg.Go(func() { run(ctxA, "master-1") })
	waitFor(t, 20*time.Second, func() bool { return acting.Load() == 1 })
	wg.Go(func() { run(ctxB, "master-2") })
	time.Sleep(2 * timings.LeaseDuration)
	mu.Lock()
	first := append([]string(nil), terms...)
	mu.Unlock()
	if len(first) != 1 || first[0] != "master-1" {
		t.Fatalf("terms before the handover = %v, want [master-1]", first)
	}
	stopA()
	waitFor(t, 20*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(terms) == 2 && terms[1] == "master-2"
	})
	stopB()
	wg.Wait()
	if overlap.Load() {
		t.Error("two masters acted at the same time")
	}
}

func waitFor(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
