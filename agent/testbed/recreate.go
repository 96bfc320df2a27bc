package testbed

import (
	"fmt"
	"os"
	"path/filepath"
)

// Recreate is what `onevm recover --recreate` does to a VM: the running
// instance is destroyed (a power cut, as the host failure or the cancel
// that precedes the resubmit is), and the VM boots again under the same
// identity (name, IP, MAC; OpenNebula keeps the VM ID, its leases and
// USER_TEMPLATE) from a fresh disk made from the image
// (LifeCycleManager::trigger_delete_recreate; reference day2-opennebula.md
// §2). The old disk is set aside as disk.recreated-<n>, not deleted, so a
// failing test can still read it.
func (vm *VM) Recreate() error {
	if err := vm.PowerOff(); err != nil {
		return err
	}
	vm.mu.Lock()
	disk := filepath.Join(vm.dir, "disk")
	old := ""
	for n := 1; ; n++ {
		old = fmt.Sprintf("%s.recreated-%d", disk, n)
		if _, err := os.Stat(old); os.IsNotExist(err) {
			break
		}
	}
	err := os.Rename(disk, old)
	vm.mu.Unlock()
	if err != nil {
		return fmt.Errorf("VM %s: setting its old disk aside: %w", vm.Spec.Name, err)
	}
	if err := vm.prepareDisk(); err != nil {
		return fmt.Errorf("VM %s: preparing its fresh disk: %w", vm.Spec.Name, err)
	}
	vm.bed.o.Logf("testbed: VM %s recreated: fresh disk, old one kept as %s", vm.Spec.Name, filepath.Base(old))
	return vm.PowerOn()
}

// Recreate recreates a VM of the service (see VM.Recreate) and runs its
// agent on the fresh disk, as the unit would at the new boot; one-context
// writes one_env again from the kept template.
func (s *Service) Recreate(vmid int, extra ...string) (*AgentRun, error) {
	vm := s.VM(vmid)
	if vm == nil {
		return nil, fmt.Errorf("VM %d never booted", vmid)
	}
	if err := vm.Recreate(); err != nil {
		return nil, err
	}
	return s.RunAgain(vmid, extra...)
}
