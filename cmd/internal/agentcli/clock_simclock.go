//go:build simclock

package agentcli

import (
	"os"

	"github.com/onekube/onekube/agent/system"
)

// SimClockEnv names the virtual clock's file in the simulated cluster
// (agent/internal/simcluster builds onekube-agent and onekubed with -tags
// simclock). No production build has this: its clock is the wall clock.
const SimClockEnv = "ONEKUBE_SIMCLOCK"

// NewClock reads the virtual clock SimClockEnv names, else the wall clock.
func NewClock() system.Clock {
	if p := os.Getenv(SimClockEnv); p != "" {
		return system.FileClock{Path: p}
	}
	return system.RealClock{}
}
