package serve

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
)

// The lease goes to the master whose leaves expire first: a master that
// renewed quickly and is due again must not take it back before one that
// has waited all along (TestCertRenewal on the bed: master-102 lost every
// race to 100 and 101 and its leaves expired).
func TestCertLeaseGoesToTheEarliestExpiry(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 0, 10, 0, 0, time.UTC)
	cs := fake.NewClientset()
	lease := func(id string) certLease {
		return certLease{client: cs, identity: id, duration: DefaultCertLeaseDuration}
	}
	late, early := now.Add(3*time.Minute), now.Add(time.Minute)

	if ok, err := lease("m100").acquire(ctx, now, late); err != nil || !ok {
		t.Fatalf("m100 on a free lease: %v, %v", ok, err)
	}
	// m102 is due while m100 holds it: it waits, and says how urgently.
	if ok, _ := lease("m102").acquire(ctx, now.Add(10*time.Second), early); ok {
		t.Fatal("m102 took a held lease")
	}
	if err := lease("m100").release(ctx); err != nil {
		t.Fatal(err)
	}
	// m101 and m100 (due again) ask first, but m102's leaves expire first.
	for _, id := range []string{"m101", "m100"} {
		if ok, _ := lease(id).acquire(ctx, now.Add(20*time.Second), late); ok {
			t.Fatalf("%s took the lease before m102, whose leaves expire first", id)
		}
	}
	if ok, err := lease("m102").acquire(ctx, now.Add(30*time.Second), early); err != nil || !ok {
		t.Fatalf("m102: %v, %v", ok, err)
	}
	// The holder's refreshes are never held back by the queue.
	if ok, _ := lease("m102").acquire(ctx, now.Add(40*time.Second), time.Time{}); !ok {
		t.Error("the holder could not refresh its lease")
	}
	if err := lease("m102").release(ctx); err != nil {
		t.Fatal(err)
	}
	// m102's entry went with its turn; m100 and m101 recorded the same
	// NotAfter, so either may go.
	if ok, _ := lease("m100").acquire(ctx, now.Add(50*time.Second), late); !ok {
		t.Error("m100 still held back after m102's turn")
	}
}

// A master that stopped asking (dead, or its credential expired) keeps
// nobody waiting past certDueFresh.
func TestCertLeaseIgnoresAStaleEntry(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 0, 10, 0, 0, time.UTC)
	cs := fake.NewClientset()
	l := func(id string) certLease {
		return certLease{client: cs, identity: id, duration: DefaultCertLeaseDuration}
	}
	if ok, _ := l("m100").acquire(ctx, now, now.Add(time.Hour)); !ok {
		t.Fatal("m100")
	}
	l("m102").acquire(ctx, now, now.Add(time.Minute)) //nolint:errcheck // queues m102
	if err := l("m100").release(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _ := l("m101").acquire(ctx, now.Add(time.Minute), now.Add(time.Hour)); ok {
		t.Fatal("m101 went before a fresh, earlier m102")
	}
	if ok, _ := l("m101").acquire(ctx, now.Add(certDueFresh+time.Second), now.Add(time.Hour)); !ok {
		t.Error("m101 still waits for m102, which stopped asking")
	}
}
