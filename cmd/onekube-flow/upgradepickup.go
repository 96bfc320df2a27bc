package main

import (
	"context"
	"strings"
	"time"

	"github.com/onekube/onekube/agent/kversion"
	"github.com/onekube/onekube/flow/status"
)

// pickupWait bounds how long `onekube-flow upgrade` waits for the acting
// master to take its plan up: serve reads the plan every minute while no
// rollout runs (serve.DefaultUpgradeIdle), so two minutes is one tick and
// its slack.
const pickupWait = 2 * time.Minute

// takenUp says whether an acting master's published rollout line names
// the target with no stop: serve read the plan (a rerun after a stop
// clears the stop only when serve reads it). Until then the service looks
// ready, and the status --wait the command suggests would return at once,
// before the rollout began (seen in the bed). The line is a sibling's
// claim: at worst a forged one ends this wait early, as it can fool the
// status it stands for; nothing acts on it.
func takenUp(r status.Report, target kversion.Version) bool {
	for _, v := range r.VMs {
		u := v.Upgrade
		if v.Living.Serve == "acting" && strings.HasPrefix(u.Rollout, target.String()+" ") && u.RolloutError == "" {
			return true
		}
	}
	return false
}

// awaitPickup polls the service until takenUp or ctx ends; a failed read
// is retried, as status --wait does.
func awaitPickup(ctx context.Context, fetch func(context.Context) (status.Report, error), target kversion.Version,
	every time.Duration, sleep func(context.Context, time.Duration) error) bool {
	for {
		if r, err := fetch(ctx); err == nil && takenUp(r, target) {
			return true
		}
		if ctx.Err() != nil || sleep(ctx, every) != nil {
			return false
		}
	}
}
