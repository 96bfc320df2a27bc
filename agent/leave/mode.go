package leave

import (
	"fmt"

	"github.com/onekube/onekube/context/onegate"
)

// Mode is what a stopping node does.
type Mode string

// Modes.
const (
	// ModeTerminate: the VM is being terminated: cordon, drain, delete
	// the Node (a master keeps it: see Options.KeepNode).
	ModeTerminate Mode = "terminate"
	// ModeDrain: the VM powers off or is undeployed and comes back with
	// its disk: cordon and drain, keep the Node.
	ModeDrain Mode = "drain"
	// ModeNone: a guest reboot, or a stop of the unit alone.
	ModeNone Mode = "none"
)

// ModeFor reads this VM's state as OneGate reports it while the guest
// shuts down: oned sets the LCM state before it sends the ACPI event
// (LifeCycleActions trigger_shutdown and trigger_poweroff), so it is
// already SHUTDOWN or SHUTDOWN_POWEROFF/UNDEPLOY when systemd stops the
// unit. A guest that reboots itself stays RUNNING.
func ModeFor(vm *onegate.VM) (Mode, string) {
	if vm.State != onegate.StateActive {
		return ModeNone, fmt.Sprintf("STATE %d is not ACTIVE", vm.State)
	}
	switch vm.LCMState {
	case onegate.LCMShutdown:
		return ModeTerminate, "LCM_STATE SHUTDOWN: the VM is being terminated"
	case onegate.LCMShutdownPoweroff:
		return ModeDrain, "LCM_STATE SHUTDOWN_POWEROFF: the VM powers off and comes back"
	case onegate.LCMShutdownUndeploy:
		return ModeDrain, "LCM_STATE SHUTDOWN_UNDEPLOY: the VM is undeployed and comes back"
	case onegate.LCMRunning:
		return ModeNone, "LCM_STATE RUNNING: a guest reboot or a stop of the unit"
	}
	return ModeNone, fmt.Sprintf("LCM_STATE %d", vm.LCMState)
}
