package onegatesim

import (
	"fmt"
	"sort"
	"strings"
)

// VM states as oned numbers them (include/VirtualMachine.h VmState,
// LcmState @release-7.4.0; the same numbers @release-6.10.5).
const (
	vmActive   = 3
	vmDone     = 6
	vmPoweroff = 8

	lcmInit             = 0
	lcmUnknown          = 16
	lcmShutdownPoweroff = 18
)

var vmStateNames = map[int]string{vmActive: "ACTIVE", vmDone: "DONE", vmPoweroff: "POWEROFF"}

// lcmNames are the LCM states a test may put a VM in with SetLCMState, and
// the ones the simulator shows. The *_FAILURE names are EventManager's
// FAILURE_STATES (src/flow/lib/EventManager.rb @release-7.4.0), which
// ServiceWatchDog::WARNING_STATES adds to POWEROFF and UNKNOWN.
var lcmNames = map[int]string{
	lcmRunning: "RUNNING", lcmShutdown: "SHUTDOWN", lcmUnknown: "UNKNOWN",
	lcmShutdownPoweroff: "SHUTDOWN_POWEROFF",
	36:                  "BOOT_FAILURE", 37: "BOOT_MIGRATE_FAILURE", 38: "PROLOG_MIGRATE_FAILURE",
	39: "PROLOG_FAILURE", 40: "EPILOG_FAILURE", 41: "EPILOG_STOP_FAILURE",
	42: "EPILOG_UNDEPLOY_FAILURE", 44: "PROLOG_MIGRATE_POWEROFF_FAILURE",
	46: "PROLOG_MIGRATE_SUSPEND_FAILURE", 47: "BOOT_UNDEPLOY_FAILURE",
	48: "BOOT_STOPPED_FAILURE", 49: "PROLOG_RESUME_FAILURE", 50: "PROLOG_UNDEPLOY_FAILURE",
	61: "PROLOG_MIGRATE_UNKNOWN_FAILURE",
}

// vmState is the VM's STATE: ACTIVE unless powered off or done.
func (v *vm) vmState() int {
	if v.state == 0 {
		return vmActive
	}
	return v.state
}

// lcmState is the VM's LCM_STATE as OneGate shows it: LCM_INIT outside
// ACTIVE; RUNNING for the zero value.
func (v *vm) lcmState() int {
	switch {
	case v.vmState() != vmActive:
		return lcmInit
	case v.lcm == 0:
		return lcmRunning
	}
	return v.lcm
}

// stateText is VirtualMachine::state_str: the LCM state's name while
// ACTIVE, the VM state's otherwise.
func (v *vm) stateText() string {
	if v.vmState() == vmActive {
		if n, ok := lcmNames[v.lcmState()]; ok {
			return n
		}
		return fmt.Sprintf("LCM_STATE_%d", v.lcmState())
	}
	return vmStateNames[v.vmState()]
}

// inWarningState is ServiceWatchDog::WARNING_STATES: POWEROFF, UNKNOWN or
// any *_FAILURE, matched against the VM state or the LCM state
// (ServiceWatchDog#check_role_state).
func (v *vm) inWarningState() bool {
	if v.vmState() == vmPoweroff {
		return true
	}
	if v.vmState() != vmActive {
		return false
	}
	l := v.lcmState()
	return l == lcmUnknown || strings.HasSuffix(lcmNames[l], "_FAILURE")
}

// setVMState moves a VM to a new STATE/LCM_STATE, records it, and lets
// OneFlow's watchdog see it (oned publishes "EVENT SERVICE <id>" on every
// state change of a VM with a SERVICE_ID: hm/HookStateVM.cc,
// hm_mad/one_hm.rb). Callers hold s.mu.
func (s *Sim) setVMState(v *vm, state, lcm int) {
	if v.vmState() == state && (state != vmActive || v.lcmState() == lcm) {
		return
	}
	v.state, v.lcm = state, lcm
	if state == vmDone {
		v.done = true
		delete(s.vms, v.id)
		delete(s.usedIPs, v.nic.ip)
	}
	s.record(EventVMState, v.svc.id, v.id, v.role.spec.name, v.stateText())
	s.watchdog(v)
}

// watched: ServiceWatchDog acts only on services it watches, those RUNNING
// or WARNING (check_roles_state); LifeCycleManager#scale_action stops
// watching a service while it scales and cools down, and add_service
// watches it again, re-checking every node, once it is RUNNING.
func watched(svc *service) bool {
	return svc.state == stateRunning || svc.state == stateWarning
}

// watchdog is ServiceWatchDog#check_role_state for one VM event. Callers
// hold s.mu.
func (s *Sim) watchdog(v *vm) {
	if watched(v.svc) {
		s.checkRoleState(v)
	}
}

// rewatch is ServiceWatchDog#add_service: every node checked again, in
// node order, as the actions it triggers would run. Callers hold s.mu.
func (s *Sim) rewatch(svc *service) {
	for _, r := range svc.roles {
		for _, v := range append([]*vm(nil), r.nodes...) {
			s.checkRoleState(v)
		}
	}
}

// checkRoleState maps a VM's state to a LifeCycleManager callback
// (ServiceWatchDog#check_role_state @release-7.4.0 and 6.10.5): a warning
// state → error_wd_cb, DONE → done_wd_cb, RUNNING → running_wd_cb; any
// other state is ignored. Callers hold s.mu.
func (s *Sim) checkRoleState(v *vm) {
	svc, r := v.svc, v.role
	switch {
	case v.inWarningState():
		// error_wd_cb: service and role WARNING.
		s.setServiceState(svc, stateWarning)
		s.setRoleState(svc, r, stateWarning)
	case v.done:
		// done_wd_cb: cardinality - 1 (forced, only if it stays >= 0) and
		// the node dropped. Neither the role's nor the service's state
		// changes: a WARNING caused by this VM stays.
		if !r.has(v) {
			return
		}
		if r.cardinality-1 >= 0 {
			r.cardinality--
		}
		s.dropNode(v)
		s.record(EventScale, svc.id, v.id, r.spec.name, fmt.Sprintf("VM %d is done: cardinality %d", v.id, r.cardinality))
	case v.vmState() == vmActive && v.lcmState() == lcmRunning:
		// running_wd_cb: the role RUNNING; the service RUNNING once every
		// role is, whatever the role's other VMs are doing.
		s.setRoleState(svc, r, stateRunning)
		if allRolesRunning(svc) {
			s.setServiceState(svc, stateRunning)
		}
	}
}

func allRolesRunning(svc *service) bool {
	for _, r := range svc.roles {
		if r.state != stateRunning {
			return false
		}
	}
	return true
}

func (r *role) has(v *vm) bool {
	for _, n := range r.nodes {
		if n == v {
			return true
		}
	}
	return false
}

// VMState is a VM's state as oned's state_str names it ("RUNNING",
// "POWEROFF", "UNKNOWN", "SHUTDOWN", "DONE"...), or "" if the simulator
// never had it.
func (s *Sim) VMState(vmid int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.findVM(vmid); v != nil {
		return v.stateText()
	}
	return ""
}

// findVM finds a VM alive or, while its role still lists it, DONE.
// Callers hold s.mu.
func (s *Sim) findVM(vmid int) *vm {
	if v := s.vms[vmid]; v != nil {
		return v
	}
	for _, svc := range s.services {
		for _, r := range svc.roles {
			for _, v := range r.nodes {
				if v.id == vmid {
					return v
				}
			}
		}
	}
	return nil
}

// SetLCMState puts a living VM in an LCM state no action leads to: what a
// host that stops answering (UNKNOWN) or a failed driver operation
// (BOOT_FAILURE, PROLOG_FAILURE...) does to it, or RUNNING again when the
// host answers. The guest is not touched: no hook runs.
func (s *Sim) SetLCMState(vmid int, name string) error {
	lcm := -1
	for n, text := range lcmNames {
		if text == name && (n == lcmRunning || n == lcmUnknown || strings.HasSuffix(text, "_FAILURE")) {
			lcm = n
		}
	}
	if lcm < 0 {
		var ok []string
		for n, text := range lcmNames {
			if n == lcmRunning || n == lcmUnknown || strings.HasSuffix(text, "_FAILURE") {
				ok = append(ok, text)
			}
		}
		sort.Strings(ok)
		return fmt.Errorf("LCM state %q: not one of %s", name, strings.Join(ok, ", "))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.vms[vmid]
	if v == nil {
		return fmt.Errorf("VM %d does not exist", vmid)
	}
	if v.vmState() != vmActive {
		return fmt.Errorf("VM %d is %s, not ACTIVE", vmid, v.stateText())
	}
	s.setVMState(v, vmActive, lcm)
	return nil
}
