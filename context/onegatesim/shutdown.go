package onegatesim

import (
	"fmt"
	"time"
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

// shrink terminates the oldest VMs above cardinality n. Callers hold s.mu.
func (s *Sim) shrink(r *role, n int) {
	if s.o.ShutdownTimeout <= 0 {
		for len(r.nodes) > n {
			s.removeVM(r.nodes[0])
		}
		return
	}
	for _, v := range r.nodes[:max(len(r.nodes)-n, 0)] {
		if v.lcm != lcmShutdown {
			s.softTerminate(v)
		}
	}
}

// softTerminate starts a VM's shutdown. Callers hold s.mu.
func (s *Sim) softTerminate(v *vm) {
	v.lcm = lcmShutdown
	s.record(EventVMAction, v.svc.id, v.id, v.role.spec.name, "soft terminate: LCM_STATE SHUTDOWN, ACPI shutdown sent")
	info := v.info()
	for _, f := range s.shutdownHooks {
		s.hookWG.Add(1)
		go func() {
			defer s.hookWG.Done()
			f(info)
		}()
	}
	id := v.id
	t := time.AfterFunc(s.o.ShutdownTimeout, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed {
			return
		}
		if v := s.vms[id]; v != nil && v.lcm == lcmShutdown {
			s.record(EventVMAction, v.svc.id, id, v.role.spec.name, fmt.Sprintf("SHUTDOWN_TIMEOUT %s passed: destroyed", s.o.ShutdownTimeout))
			s.destroy(v)
		}
	})
	s.timers = append(s.timers, t)
}

// destroy ends a VM (EPILOG, DONE): OneFlow drops it from its role.
// Callers hold s.mu.
func (s *Sim) destroy(v *vm) {
	svc := v.svc
	s.removeVM(v)
	s.advance(svc)
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
// destroyed now rather than at the timeout.
func (s *Sim) PoweredOff(vmid int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.vms[vmid]
	if v == nil {
		return fmt.Errorf("VM %d does not exist", vmid)
	}
	if v.lcm != lcmShutdown {
		return fmt.Errorf("VM %d is not shutting down", vmid)
	}
	s.record(EventVMAction, v.svc.id, vmid, v.role.spec.name, "guest powered off: destroyed")
	s.destroy(v)
	return nil
}

// TerminateHard is `onevm terminate --hard` by an operator (or a host
// that died and a VM that was deleted): no guest shutdown, the VM is gone
// at once, and OneFlow lowers the role's cardinality by one
// (LifeCycleManager#done_wd_cb).
func (s *Sim) TerminateHard(vmid int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.vms[vmid]
	if v == nil {
		return fmt.Errorf("VM %d does not exist", vmid)
	}
	r := v.role
	s.record(EventVMAction, v.svc.id, vmid, r.spec.name, "perform=terminate-hard")
	if r.cardinality > 0 {
		r.cardinality--
	}
	s.destroy(v)
	return nil
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
		if v.lcm == lcmShutdown {
			return true
		}
	}
	return false
}
