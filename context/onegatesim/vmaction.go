package onegatesim

import (
	"fmt"
	"strings"
	"time"
)

// The VM actions the simulator gives effect to, as oned carries them out
// (dm/DispatchManagerActions.cc @release-7.4.0): which states allow them,
// which state they lead to, and what happens to the guest. The guest's
// side is the harness's: OnVMShutdown hooks get the ACPI event of a soft
// terminate or poweroff, OnVMPower hooks a hard power cut or a boot.

// Power is what the hypervisor does to a VM's guest.
type Power int

// Power changes.
const (
	// PowerCut: the guest is destroyed at once (terminate-hard,
	// poweroff-hard, a soft one at SHUTDOWN_TIMEOUT, or a soft one with
	// no Options.ShutdownTimeout).
	PowerCut Power = iota + 1
	// PowerOn: the guest boots again from its disk (resume).
	PowerOn
)

func (p Power) String() string {
	switch p {
	case PowerCut:
		return "power-cut"
	case PowerOn:
		return "power-on"
	}
	return fmt.Sprintf("Power(%d)", int(p))
}

// OnVMPower registers f to be called, in a goroutine of its own, when a
// VM's guest is cut off or booted again by an action.
func (s *Sim) OnVMPower(f func(VMInfo, Power)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.powerHooks = append(s.powerHooks, f)
}

// firePower runs the power hooks. Callers hold s.mu.
func (s *Sim) firePower(v *vm, p Power) {
	info := v.info()
	for _, f := range s.powerHooks {
		s.hookWG.Add(1)
		go func() {
			defer s.hookWG.Done()
			f(info, p)
		}()
	}
}

// actionError is oned refusing an action: OCA's message, which OneGate
// hands to `halt 500` (perform_action).
type actionError struct{ msg string }

func (e *actionError) Error() string { return e.msg }

// notAvailable is DispatchManager's refusal, prefixed by
// Request::failure_message ("[one.vm.action] ...").
func notAvailable(v *vm) error {
	return &actionError{"[one.vm.action] This action is not available for state " + v.stateText()}
}

// vmAction performs terminate, poweroff or resume on v; hard is OCA's
// argument (terminate(hard), poweroff(hard)). Callers hold s.mu.
func (s *Sim) vmAction(v *vm, name string, hard bool) error {
	st, lcm := v.vmState(), v.lcmState()
	live := st == vmActive && (lcm == lcmRunning || lcm == lcmUnknown)
	switch name {
	case "terminate":
		switch {
		case st == vmPoweroff:
			// DispatchManager::terminate: POWEROFF goes to EPILOG, hard or
			// not; no guest runs.
			s.finish(v, vmDone)
		case hard && (live || (st == vmActive && lcm == lcmShutdown)):
			// trigger_cancel; it also overrides a stuck soft SHUTDOWN.
			s.cut(v, vmDone)
		case live:
			s.softShutdown(v, lcmShutdown)
		case st == vmActive && strings.HasSuffix(lcmNames[lcm], "_FAILURE"):
			// DispatchManager::terminate: every *_FAILURE LCM state goes
			// to lcm->trigger_delete, hard or not (dm/
			// DispatchManagerActions.cc). Whatever the driver left of the
			// guest is cancelled: a bed VM that still runs loses power.
			s.cut(v, vmDone)
		default:
			return notAvailable(v)
		}
	case "poweroff":
		switch {
		case hard && (live || (st == vmActive && lcm == lcmShutdownPoweroff)):
			s.cut(v, vmPoweroff) // trigger_poweroff_hard
		case live:
			s.softShutdown(v, lcmShutdownPoweroff) // trigger_poweroff
		default:
			return notAvailable(v)
		}
	case "resume":
		// DispatchManager::resume: POWEROFF, or ACTIVE/UNKNOWN, restart
		// (BOOT_POWEROFF / BOOT_UNKNOWN, then RUNNING).
		if st != vmPoweroff && !(st == vmActive && lcm == lcmUnknown) {
			return notAvailable(v)
		}
		s.record(EventVMAction, v.svc.id, v.id, v.role.spec.name, "resume: booting")
		s.firePower(v, PowerOn)
		s.setVMState(v, vmActive, lcmRunning)
	default:
		return fmt.Errorf("action %q is not simulated", name)
	}
	return nil
}

// rename is one.vm.rename (SharedAPI::rename, PoolObjectSQL::name_is_valid):
// VM names need not be unique (VirtualMachineAPI::exist), but must be
// non-empty, at most 128 characters, without &|:\";/'#{}$<> or control
// whitespace. OCA passes params as the name; anything but a string cannot
// be one (inferred: the XML-RPC call fails). Callers hold s.mu.
func (s *Sim) rename(v *vm, params any) error {
	name, ok := params.(string)
	switch {
	case !ok:
		return &actionError{"[one.vm.rename] the new name is not a string"}
	case name == "":
		return &actionError{"[one.vm.rename] Invalid NAME, it cannot be empty"}
	case strings.ContainsAny(name, "&|:\\\";/'#{}$<>\t\n\v\f\r"):
		c := name[strings.IndexAny(name, "&|:\\\";/'#{}$<>\t\n\v\f\r")]
		return &actionError{fmt.Sprintf("[one.vm.rename] Invalid NAME, char '%c' is not allowed", c)}
	case len(name) > 128:
		return &actionError{"[one.vm.rename] Invalid NAME, max length is 128 chars"}
	}
	old := v.name
	v.name = name
	s.record(EventVMAction, v.svc.id, v.id, v.role.spec.name, fmt.Sprintf("renamed from %q to %q", old, name))
	return nil
}

// cut destroys the guest at once and ends the VM in state. Callers hold s.mu.
func (s *Sim) cut(v *vm, state int) {
	s.firePower(v, PowerCut)
	s.finish(v, state)
}

// softShutdown sets LCM_STATE SHUTDOWN (terminate) or SHUTDOWN_POWEROFF
// (poweroff) before the driver sends the ACPI event
// (LifeCycleActions.cc trigger_shutdown / trigger_poweroff). The guest's
// hooks run; PoweredOff or SHUTDOWN_TIMEOUT (FORCE_DESTROY, kvmrc) ends it.
// Without Options.ShutdownTimeout the guest is cut off at once. Callers
// hold s.mu.
func (s *Sim) softShutdown(v *vm, lcm int) {
	end := vmDone
	if lcm == lcmShutdownPoweroff {
		end = vmPoweroff
	}
	if s.o.ShutdownTimeout <= 0 {
		s.cut(v, end)
		return
	}
	s.setVMState(v, vmActive, lcm)
	s.record(EventVMAction, v.svc.id, v.id, v.role.spec.name, "LCM_STATE "+lcmNames[lcm]+", ACPI shutdown sent")
	info := v.info()
	for _, f := range s.shutdownHooks {
		s.hookWG.Add(1)
		go func() {
			defer s.hookWG.Done()
			f(info)
		}()
	}
	t := time.AfterFunc(s.o.ShutdownTimeout, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed || v.done || v.vmState() != vmActive || v.lcmState() != lcm {
			return
		}
		s.record(EventVMAction, v.svc.id, v.id, v.role.spec.name, fmt.Sprintf("SHUTDOWN_TIMEOUT %s passed: destroyed", s.o.ShutdownTimeout))
		s.cut(v, end)
	})
	s.timers = append(s.timers, t)
}

// finish ends a shutdown: POWEROFF, or DONE. A VM a scale-down
// terminated is dropped by scaledown_cb (EventManager#wait_scaledown_action
// waited for it), any other DONE VM by the watchdog's done_wd_cb. Callers
// hold s.mu.
func (s *Sim) finish(v *vm, state int) {
	s.setVMState(v, state, lcmInit)
	if state == vmDone && v.scaledown && v.role.has(v) {
		s.dropNode(v)
	}
	s.advance(v.svc)
}

// Act is an operator's `onevm terminate|poweroff|resume [--hard]` on a VM
// of a service, with oned's refusals.
func (s *Sim) Act(vmid int, action string, hard bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.vms[vmid]
	if v == nil {
		return fmt.Errorf("VM %d does not exist", vmid)
	}
	s.record(EventVMAction, v.svc.id, vmid, v.role.spec.name, fmt.Sprintf("onevm %s hard=%t", action, hard))
	return s.vmAction(v, action, hard)
}
