package testbed

import (
	"context"
	"time"

	"github.com/onekube/onekube/context/onegatesim"
)

// The bed VM follows what OpenNebula does to its OneGate VM, whether an
// action came through OneGate (a sibling, remediation, the VM itself) or
// from the test (Sim.Act, Sim.TerminateHard, a scale-down):
//   - a soft terminate or poweroff sends the guest the ACPI event: systemd
//     stops onekube-node.service, whose ExecStop is `onekubed leave` (it
//     reads LCM_STATE SHUTDOWN or SHUTDOWN_POWEROFF from OneGate to tell
//     the two apart), the other units stop, the VM powers off, and oned
//     sees it go DONE or POWEROFF (Sim.PoweredOff);
//   - a hard terminate or poweroff, or SHUTDOWN_TIMEOUT, cuts the power;
//   - resume boots the VM from its disk: its enabled units start again
//     (VM.OnBoot), onekube-bootstrap is the test's to run (RunAgain).

// leaveStopTimeout is onekube-node.service's TimeoutStopSec.
const leaveStopTimeout = 170 * time.Second

// acpi is the guest's side of a soft terminate or poweroff.
func (s *Service) acpi(info onegatesim.VMInfo) {
	vm := s.VM(info.ID)
	if vm == nil || s.ctx.Err() != nil {
		return
	}
	if vm.Pid() != 0 && s.nodeUnitActive(vm) {
		ctx, cancel := context.WithTimeout(s.ctx, leaveStopTimeout)
		out, err := vm.Run(ctx, "onekubed", "leave", "--log-format", "text")
		cancel()
		s.Bed.o.Logf("testbed: VM %d: onekubed leave (ExecStop of onekube-node.service): err %v\n%s", info.ID, err, out)
		s.mu.Lock()
		s.leaves[info.ID] = append(s.leaves[info.ID], out)
		s.mu.Unlock()
	}
	if err := vm.Shutdown(); err != nil {
		s.Bed.o.Logf("testbed: VM %d: shutting down: %v", info.ID, err)
	}
	if s.ctx.Err() == nil {
		if err := s.Sim.PoweredOff(info.ID); err != nil {
			s.Bed.o.Logf("testbed: VM %d: powered off, but: %v", info.ID, err)
		}
	}
}

// nodeUnitActive: onekube-node.service started, its conditions met
// (bootstrap done, the kubelet's credential there).
func (s *Service) nodeUnitActive(vm *VM) bool {
	for _, p := range []string{"/var/lib/onekube/bootstrap.done", "/etc/kubernetes/kubelet.conf"} {
		if _, err := vm.ReadFile(p); err != nil {
			return false
		}
	}
	return true
}

// power follows a hard power change of the VM.
func (s *Service) power(info onegatesim.VMInfo, p onegatesim.Power) {
	vm := s.VM(info.ID)
	if vm == nil || s.ctx.Err() != nil {
		return
	}
	var err error
	switch p {
	case onegatesim.PowerCut:
		err = vm.PowerOff()
	case onegatesim.PowerOn:
		if vm.Pid() == 0 { // UNKNOWN: the VM may still run
			err = vm.PowerOn()
		}
	}
	s.Bed.o.Logf("testbed: VM %d: %s: err %v", info.ID, p, err)
}

// Leaves is the output of every `onekubed leave` a VM's shutdowns ran.
func (s *Service) Leaves(vmid int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.leaves[vmid]...)
}
