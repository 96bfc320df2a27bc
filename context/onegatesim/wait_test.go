package onegatesim

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// A service whose VMs cannot all be created ends WaitServiceRunning at once
// with the reason, not after the caller's timeout.
func TestWaitServiceRunningFailsFast(t *testing.T) {
	t.Parallel()
	// A /29 has 5 leasable hosts after the gateway: 1 master + 8 workers
	// cannot fit, so the worker role fails to deploy.
	h := newHarness(t, Options{Network: netip.MustParsePrefix("192.0.2.0/29")})
	h.instantiate(`{"name":"tiny","deployment":"none","roles":[
		{"name":"master","type":"vm","template_id":1,"cardinality":1},
		{"name":"worker","type":"vm","template_id":2,"cardinality":8}]}`, "")
	start := time.Now()
	err := h.sim.WaitServiceRunning(ctxTimeout(t))
	if !errors.Is(err, ErrServiceFailed) {
		t.Fatalf("err = %v, want ErrServiceFailed", err)
	}
	if !strings.Contains(err.Error(), "role worker") || !strings.Contains(err.Error(), ErrPoolExhausted.Error()) {
		t.Errorf("err = %v, want the worker role and the exhausted pool named", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v: the wait ran into its timeout instead of failing fast", d)
	}
}
