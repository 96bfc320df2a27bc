package etcdm

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestRemoveOwnMember on a real 3-member etcd, as a terminating master's
// leave does it: the client talks to the departing member alone, which
// forwards the removal to the leader. Two masters go that way, one after
// the other; the last member refuses to remove itself (ErrQuorum: nothing
// would be left), as kubeadm reset skips the only member.
func TestRemoveOwnMember(t *testing.T) {
	ms := startCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// etcd refuses a removal ("unhealthy cluster", --strict-reconfig-check)
	// until the members left have been connected for 5 s (etcdserver
	// HealthInterval): a master that has been up a while.
	time.Sleep(6 * time.Second)
	if err := client(t, ms[2]).RemoveMember(ctx, ms[2].ip); err != nil {
		t.Fatalf("member 3 removing itself: %v", err)
	}
	ms[2].stop() // its VM goes
	time.Sleep(6 * time.Second)
	got, err := client(t, ms[0]).Members(ctx)
	if err != nil || Summary(got) != "voter@127.0.0.1 voter@127.0.0.2" {
		t.Fatalf("after member 3 left: %q, %v", Summary(got), err)
	}
	if err := client(t, ms[1]).RemoveMember(ctx, ms[1].ip); err != nil {
		t.Fatalf("member 2 removing itself: %v", err)
	}
	ms[1].stop()
	c := client(t, ms[0])
	if got, err := c.Members(ctx); err != nil || Summary(got) != "voter@127.0.0.1" {
		t.Fatalf("after member 2 left: %q, %v", Summary(got), err)
	}
	err = c.RemoveMember(ctx, ms[0].ip)
	var qe *QuorumError
	if !errors.Is(err, ErrQuorum) || !errors.As(err, &qe) || qe.VotersAfter != 0 {
		t.Fatalf("the last member removing itself: %v, want a QuorumError", err)
	}
	if got, err := c.Members(ctx); err != nil || len(got) != 1 {
		t.Errorf("the last member: %v, %v", got, err)
	}
}
