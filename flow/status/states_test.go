package status

import "testing"

func TestStateNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n             int
		service, role string
	}{
		{0, "PENDING", "PENDING"},
		{1, "DEPLOYING", "DEPLOYING"},
		{2, "RUNNING", "RUNNING"},
		{3, "UNDEPLOYING", "UNDEPLOYING"},
		{4, "WARNING", "WARNING"},
		{5, "DONE", "DONE"},
		{6, "FAILED_UNDEPLOYING", "FAILED_UNDEPLOYING"},
		{7, "FAILED_DEPLOYING", "FAILED_DEPLOYING"},
		{8, "SCALING", "SCALING"},
		{9, "FAILED_SCALING", "FAILED_SCALING"},
		{10, "COOLDOWN", "COOLDOWN"},
		{11, "DEPLOYING_NETS", "HOLD"},
		{12, "UNDEPLOYING_NETS", "STATE_12"},
		{13, "FAILED_DEPLOYING_NETS", "STATE_13"},
		{14, "FAILED_UNDEPLOYING_NETS", "STATE_14"},
		{15, "HOLD", "STATE_15"},
		{16, "STATE_16", "STATE_16"},
		{-1, "STATE_-1", "STATE_-1"},
	} {
		if got := ServiceStateName(tc.n); got != tc.service {
			t.Errorf("ServiceStateName(%d) = %s, want %s", tc.n, got, tc.service)
		}
		if got := RoleStateName(tc.n); got != tc.role {
			t.Errorf("RoleStateName(%d) = %s, want %s", tc.n, got, tc.role)
		}
	}
}

func TestVMFailed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		state, lcm string
		want       bool
	}{
		{"ACTIVE", "RUNNING", false},
		{"ACTIVE", "BOOT", false},
		{"ACTIVE", "BOOT_FAILURE", true},
		{"ACTIVE", "PROLOG_FAILURE", true},
		{"ACTIVE", "EPILOG_STOP_FAILURE", true},
		{"FAILURE", "LCM_INIT", true},
		{"CLONING_FAILURE", "LCM_INIT", true},
		{"DONE", "LCM_INIT", true},
		{"POWEROFF", "LCM_INIT", false},
		{"PENDING", "LCM_INIT", false},
	} {
		if got := vmFailed(tc.state, tc.lcm); got != tc.want {
			t.Errorf("vmFailed(%s, %s) = %v", tc.state, tc.lcm, got)
		}
	}
}
