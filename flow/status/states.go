package status

import (
	"strconv"
	"strings"
)

// OneFlow's service states (src/flow/lib/models/service.rb, STATE_STR).
// 11-15 exist only on 6.10/7.x; older servers never send them.
var serviceStates = []string{
	"PENDING", "DEPLOYING", "RUNNING", "UNDEPLOYING", "WARNING", "DONE",
	"FAILED_UNDEPLOYING", "FAILED_DEPLOYING", "SCALING", "FAILED_SCALING",
	"COOLDOWN", "DEPLOYING_NETS", "UNDEPLOYING_NETS", "FAILED_DEPLOYING_NETS",
	"FAILED_UNDEPLOYING_NETS", "HOLD",
}

// OneFlow's role states (src/flow/lib/models/role.rb); HOLD is 7.x.
var roleStates = []string{
	"PENDING", "DEPLOYING", "RUNNING", "UNDEPLOYING", "WARNING", "DONE",
	"FAILED_UNDEPLOYING", "FAILED_DEPLOYING", "SCALING", "FAILED_SCALING",
	"COOLDOWN", "HOLD",
}

// ServiceStateName names a OneFlow service state; an unknown number comes
// back as "STATE_n" so a newer server still prints something true.
func ServiceStateName(n int) string { return stateName(serviceStates, n) }

// RoleStateName names a OneFlow role state.
func RoleStateName(n int) string { return stateName(roleStates, n) }

func stateName(names []string, n int) string {
	if n >= 0 && n < len(names) {
		return names[n]
	}
	return "STATE_" + strconv.Itoa(n)
}

// failedState: OneFlow's FAILED_* service and role states.
func failedState(name string) bool { return strings.HasPrefix(name, "FAILED_") }

// goneState: a service that is going or gone will not become ready, so
// waiting for it is pointless.
func goneState(name string) bool {
	switch name {
	case "UNDEPLOYING", "UNDEPLOYING_NETS", "DONE":
		return true
	}
	return false
}

// vmFailed: oned's own failure states, STATE FAILURE/CLONING_FAILURE and
// every *_FAILURE LCM state (OneFlow fails the role on these too), and a VM
// already DONE, which will never report READY.
func vmFailed(state, lcm string) bool {
	return strings.HasSuffix(state, "FAILURE") || strings.HasSuffix(lcm, "_FAILURE") || state == "DONE"
}
