package onegate

import "testing"

// Trouble is exactly the set OneFlow's watchdog puts in WARNING.
func TestTrouble(t *testing.T) {
	tests := []struct {
		state, lcm int
		name       string
		failed     bool
	}{
		{StateActive, LCMRunning, "", false},
		{StatePoweroff, 0, "POWEROFF", false},
		{StateActive, LCMUnknown, "UNKNOWN", false},
		{StateActive, 36, "BOOT_FAILURE", true},
		{StateActive, 39, "PROLOG_FAILURE", true},
		{StateActive, 44, "PROLOG_MIGRATE_POWEROFF_FAILURE", true},
		{StateActive, 50, "PROLOG_UNDEPLOY_FAILURE", true},
		{StateActive, 61, "PROLOG_MIGRATE_UNKNOWN_FAILURE", true},
		{StateActive, 43, "", false}, // PROLOG_MIGRATE_POWEROFF, not a failure
		{StateActive, 60, "", false}, // PROLOG_MIGRATE_UNKNOWN
		{StateActive, 19, "", false}, // BOOT_UNKNOWN: resuming
		{StateActive, LCMShutdown, "", false},
		{StateStopped, 0, "", false},
		{StateUndeployed, 0, "", false},
		{StateDone, 0, "", false},
		{StateSuspended, 0, "", false},
		{StatePending, 36, "", false}, // an LCM state counts only in ACTIVE
	}
	for _, tt := range tests {
		name, failed := Trouble(tt.state, tt.lcm)
		if name != tt.name || failed != tt.failed {
			t.Errorf("Trouble(%d, %d) = %q %v, want %q %v", tt.state, tt.lcm, name, failed, tt.name, tt.failed)
		}
	}
}
