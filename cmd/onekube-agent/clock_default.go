//go:build !simclock

package main

import "github.com/onekube/onekube/agent/system"

// newClock is the agent's clock: the wall clock. A build with -tags
// simclock reads a virtual one instead (clock_simclock.go).
func newClock() system.Clock { return system.RealClock{} }
