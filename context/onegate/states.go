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
)
