package onegate

// VM states and LCM states as OneGate reports them in STATE and LCM_STATE
// (OpenNebula include/VirtualMachine.h; the same numbers as goca's
// schemas/vm/vm_state.go). Only the ones onekube acts on are named.
const (
	StatePending    = 1
	StateHold       = 2
	StateActive     = 3
	StateStopped    = 4
	StateSuspended  = 5
	StateDone       = 6
	StatePoweroff   = 8
	StateUndeployed = 9

	LCMProlog           = 1
	LCMBoot             = 2
	LCMRunning          = 3
	LCMEpilog           = 11
	LCMShutdown         = 12 // terminate: ACPI shutdown, then destroy after SHUTDOWN_TIMEOUT
	LCMShutdownPoweroff = 18 // poweroff: the VM comes back with its disk
	LCMShutdownUndeploy = 29 // undeploy: likewise
)

// Service states (OneFlow Service::STATE) a serve loop tells apart.
const (
	ServiceDeploying = 1
	ServiceRunning   = 2
	ServiceScaling   = 8
	ServiceCooldown  = 10

	// ServiceWarning: a VM is in trouble (Trouble); every scale is refused
	// until it is not (Service#can_scale? needs RUNNING).
	ServiceWarning = 4
)

// LCMUnknown is ACTIVE/UNKNOWN: oned lost the VM's host from monitoring.
// A VM can be resumed from it (BOOT_UNKNOWN, 19).
const LCMUnknown = 16

// lcmFailures are the LCM states OneFlow's watchdog calls a failure
// (every *_FAILURE of include/VirtualMachine.h, as goca's
// schemas/vm/vm_state.go numbers them); oned's DispatchManager::terminate
// deletes a VM in any of them.
var lcmFailures = map[int]string{
	36: "BOOT_FAILURE", 37: "BOOT_MIGRATE_FAILURE", 38: "PROLOG_MIGRATE_FAILURE",
	39: "PROLOG_FAILURE", 40: "EPILOG_FAILURE", 41: "EPILOG_STOP_FAILURE",
	42: "EPILOG_UNDEPLOY_FAILURE", 44: "PROLOG_MIGRATE_POWEROFF_FAILURE",
	46: "PROLOG_MIGRATE_SUSPEND_FAILURE", 47: "BOOT_UNDEPLOY_FAILURE",
	48: "BOOT_STOPPED_FAILURE", 49: "PROLOG_RESUME_FAILURE",
	50: "PROLOG_UNDEPLOY_FAILURE", 61: "PROLOG_MIGRATE_UNKNOWN_FAILURE",
}

// Trouble names a VM state that puts a OneFlow role and service in
// WARNING (src/flow/lib/ServiceWatchDog.rb, LifeCycleManager#error_wd_cb):
// POWEROFF, ACTIVE/UNKNOWN, or an ACTIVE *_FAILURE. failed is true for
// the failures, from which only terminate leads out. "" for any other
// state.
func Trouble(state, lcm int) (name string, failed bool) {
	switch {
	case state == StatePoweroff:
		return "POWEROFF", false
	case state != StateActive:
		return "", false
	case lcm == LCMUnknown:
		return "UNKNOWN", false
	}
	if n, ok := lcmFailures[lcm]; ok {
		return n, true
	}
	return "", false
}
