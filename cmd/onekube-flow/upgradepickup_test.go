package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/flow/status"
)

func pubRow(serve, rollout, rolloutErr string) status.Row {
	var v status.VM
	v.Living.Serve = serve
	v.Upgrade.Rollout, v.Upgrade.RolloutError = rollout, rolloutErr
	return status.Row{VM: v}
}

func TestTakenUp(t *testing.T) {
	for name, tc := range map[string]struct {
		rows []status.Row
		want bool
	}{
		"nothing published yet":          {rows: []status.Row{pubRow("acting", "", "")}},
		"the previous rollout's line":    {rows: []status.Row{pubRow("acting", "v1.36.3 done", "")}},
		"another target's prefix":        {rows: []status.Row{pubRow("acting", "v1.37.20 in progress: 0 node(s) granted", "")}},
		"still stopped (rerun not read)": {rows: []status.Row{pubRow("acting", "v1.37.2 in progress: 3 node(s) granted", "drain-blocked")}},
		"a standby's old line":           {rows: []status.Row{pubRow("standby", "v1.37.2 in progress: 1 node(s) granted", ""), pubRow("acting", "", "")}},
		"taken up":                       {rows: []status.Row{pubRow("standby", "", ""), pubRow("acting", "v1.37.2 in progress: 0 node(s) granted", "")}, want: true},
		"under way, rerun":               {rows: []status.Row{pubRow("acting", "v1.37.2 in progress: 2 node(s) granted", "")}, want: true},
		"already done":                   {rows: []status.Row{pubRow("acting", "v1.37.2 done", "")}, want: true},
	} {
		if got := takenUp(status.Report{VMs: tc.rows}, mustV("v1.37.2")); got != tc.want {
			t.Errorf("%s: takenUp = %v, want %v", name, got, tc.want)
		}
	}
}

// awaitPickup retries failed reads and polls until serve's line shows the
// plan; it gives up when its bound passes, never hangs.
func TestAwaitPickup(t *testing.T) {
	reads := []status.Report{{}, {}, {VMs: []status.Row{pubRow("acting", "v1.37.2 in progress: 0 node(s) granted", "")}}}
	n := 0
	fetch := func(context.Context) (status.Report, error) {
		n++
		if n == 2 {
			return status.Report{}, errors.New("oned: connection refused")
		}
		return reads[min(n-1, len(reads)-1)], nil
	}
	slept := 0
	sleep := func(ctx context.Context, _ time.Duration) error { slept++; return ctx.Err() }
	if !awaitPickup(context.Background(), fetch, mustV("v1.37.2"), time.Second, sleep) || n != 3 || slept != 2 {
		t.Fatalf("awaitPickup: %d reads, %d sleeps", n, slept)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	never := func(context.Context) (status.Report, error) { return status.Report{}, nil }
	if awaitPickup(ctx, never, mustV("v1.37.2"), 10*time.Millisecond, system.RealClock{}.Sleep) {
		t.Fatal("awaitPickup without a pickup returned true")
	}
}
