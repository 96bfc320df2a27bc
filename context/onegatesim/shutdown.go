package onegatesim

import (
	"fmt"
)

// LCM states the simulator shows (OpenNebula include/VirtualMachine.h).
const (
	lcmRunning  = 3
	lcmShutdown = 12
)

// Scale-down as OpenNebula does it with Options.ShutdownTimeout set
// (reference day2-opennebula.md §2): OneFlow terminates the role's oldest
// VMs (Role#shutdown, nodes[0..n-1]) softly; oned sets LCM_STATE SHUTDOWN
// and the driver sends the ACPI event (LifeCycleActions trigger_shutdown),
// then destroys the VM after SHUTDOWN_TIMEOUT unless the guest powered off
// first; the VM goes DONE and OneFlow, which waited for DONE, drops it and
// leaves SCALING. The guest's side (systemd stopping units) is the
// harness's: it runs from OnVMShutdown and ends with PoweredOff.

// shrink terminates the oldest VMs above cardinality n (Role#shutdown,
// nodes[0..n-1]), with OneFlow's default shutdown_action, a soft
// terminate. Callers hold s.mu.
func (s *Sim) shrink(r *role, n int) {
	var victims []*vm
	for _, v := range r.nodes[:max(len(r.nodes)-n, 0)] {
		if !v.scaledown {
			v.scaledown = true // all marked first: the role waits for each
			victims = append(victims, v)
		}
	}
	for _, v := range victims {
		s.softShutdown(v, lcmShutdown)
	}
}

// OnVMShutdown registers f to be called, in a goroutine of its own, for
// every VM a soft terminate starts to shut down: the moment its guest gets
// the ACPI event.
func (s *Sim) OnVMShutdown(f func(VMInfo)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shutdownHooks = append(s.shutdownHooks, f)
}

// PoweredOff is the guest of a shutting-down VM powering off: it is
// destroyed (terminate) or powered off (poweroff) now rather than at the
// timeout.
func (s *Sim) PoweredOff(vmid int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.vms[vmid]
	if v == nil {
		return fmt.Errorf("VM %d does not exist", vmid)
	}
	end := vmDone
	switch v.lcmState() {
	case lcmShutdown:
	case lcmShutdownPoweroff:
		end = vmPoweroff
	default:
		return fmt.Errorf("VM %d is not shutting down", vmid)
	}
	s.record(EventVMAction, v.svc.id, vmid, v.role.spec.name, "guest powered off")
	s.finish(v, end)
	return nil
}

// TerminateHard is `onevm terminate --hard` by an operator (or a host
// that died and a VM that was deleted): no guest shutdown, the VM is DONE
// at once, and OneFlow's watchdog drops it and lowers the role's
// cardinality by one (LifeCycleManager#done_wd_cb), at once if it watches
// the service, else when it watches it again.
func (s *Sim) TerminateHard(vmid int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.vms[vmid]
	if v == nil {
		return fmt.Errorf("VM %d does not exist", vmid)
	}
	s.record(EventVMAction, v.svc.id, vmid, v.role.spec.name, "perform=terminate-hard")
	return s.vmAction(v, "terminate", true)
}

// LCMState is a VM's LCM_STATE as OneGate shows it, 0 for no such VM.
func (s *Sim) LCMState(vmid int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.vms[vmid]; v != nil {
		return v.lcmState()
	}
	return 0
}

func shuttingDown(r *role) bool {
	for _, v := range r.nodes {
		if v.scaledown {
			return true
		}
	}
	return false
}
