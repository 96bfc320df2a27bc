//go:build !simclock

package agentcli

import "github.com/onekube/onekube/agent/system"

// NewClock is the clock of both programs: the wall clock. A build with
// -tags simclock reads a virtual one instead (clock_simclock.go).
func NewClock() system.Clock { return system.RealClock{} }
