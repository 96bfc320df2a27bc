//go:build simclock

package main

import (
	"os"

	"github.com/onekube/onekube/agent/system"
)

// SimClockEnv names the virtual clock's file in the simulated cluster
// (agent/internal/simcluster builds the agent with -tags simclock). No
// production build has this: its clock is the wall clock.
const SimClockEnv = "ONEKUBE_SIMCLOCK"

func newClock() system.Clock {
	if p := os.Getenv(SimClockEnv); p != "" {
		return system.FileClock{Path: p}
	}
	return system.RealClock{}
}
