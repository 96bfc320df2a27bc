package testbed

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Disk hot-plug. OpenNebula attaches an image to a running VM and the
// guest sees a new block device (virtio: /dev/vdb, ...) whose file system
// the guest mounts by label. The bed plays the device with a read-only
// loop device of the host over the image file, and plays the guest's view
// of it with the blkid and mount stand-ins (stubs/): the host's /dev is
// shared by every VM, so the VM's own disks are listed in its
// /run/testbed/disks/<target>, each naming its loop device. A disk is
// there from the attach until the detach, and again after a reboot (the
// hypervisor keeps it attached); nothing of it exists before or after.

const disksDir = "/run/testbed/disks"

var targetPattern = regexp.MustCompile(`^[vsh]d[b-z]$`)

type hotDisk struct {
	file string
	loop string
}

// AttachDisk plugs the image file into the running VM as /dev/<target>.
func (vm *VM) AttachDisk(target, file string) error {
	if !targetPattern.MatchString(target) {
		return fmt.Errorf("VM %s: disk target %q: want vdb..vdz", vm.Spec.Name, target)
	}
	vm.mu.Lock()
	defer vm.mu.Unlock()
	if vm.disks == nil {
		vm.disks = map[string]hotDisk{}
	}
	if _, ok := vm.disks[target]; ok {
		return fmt.Errorf("VM %s: target %s is already in use", vm.Spec.Name, target)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	out, err := exec.Command("losetup", "--find", "--show", "--read-only", abs).CombinedOutput()
	if err != nil {
		return fmt.Errorf("VM %s: losetup of %s: %w: %s", vm.Spec.Name, file, err, strings.TrimSpace(string(out)))
	}
	d := hotDisk{file: abs, loop: strings.TrimSpace(string(out))}
	vm.disks[target] = d
	vm.bed.o.Logf("testbed: VM %s: %s attached as /dev/%s (%s)", vm.Spec.Name, filepath.Base(file), target, d.loop)
	return vm.writeDisksLocked()
}

// DetachDisk unplugs /dev/<target>. The device is gone at once; a file
// system the guest left mounted keeps its loop device until unmounted
// (autoclear), as a guest keeps a stale mount of a yanked disk.
func (vm *VM) DetachDisk(target string) error {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	d, ok := vm.disks[target]
	if !ok {
		return fmt.Errorf("VM %s has no disk %s", vm.Spec.Name, target)
	}
	delete(vm.disks, target)
	err := vm.writeDisksLocked()
	if out, lerr := exec.Command("losetup", "--detach", d.loop).CombinedOutput(); lerr != nil {
		err = fmt.Errorf("VM %s: losetup --detach %s: %w: %s", vm.Spec.Name, d.loop, lerr, strings.TrimSpace(string(out)))
	}
	vm.bed.o.Logf("testbed: VM %s: /dev/%s detached", vm.Spec.Name, target)
	return err
}

// SetDisks makes the VM's hot-plugged disks exactly want (target → image
// file): what the hypervisor does after each attach or detach.
func (vm *VM) SetDisks(want map[string]string) error {
	vm.mu.Lock()
	var gone, added []string
	for t, d := range vm.disks {
		if want[t] != d.file {
			gone = append(gone, t)
		}
	}
	for t, f := range want {
		if d, ok := vm.disks[t]; !ok || d.file != f {
			added = append(added, t)
		}
	}
	vm.mu.Unlock()
	sort.Strings(gone)
	sort.Strings(added)
	for _, t := range gone {
		if err := vm.DetachDisk(t); err != nil {
			return err
		}
	}
	for _, t := range added {
		if err := vm.AttachDisk(t, want[t]); err != nil {
			return err
		}
	}
	return nil
}

// writeDisksLocked writes the VM's device list into its /run, when it
// runs (a boot writes it again). Callers hold vm.mu.
func (vm *VM) writeDisksLocked() error {
	if vm.h == nil {
		return nil
	}
	dir := fmt.Sprintf("/proc/%d/root%s", vm.h.pid, disksDir)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for t, d := range vm.disks {
		if err := os.WriteFile(filepath.Join(dir, t), []byte(d.loop+"\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// releaseDisks frees every loop device of the VM (the bed closing).
func (vm *VM) releaseDisks() {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	for t, d := range vm.disks {
		_ = exec.Command("losetup", "--detach", d.loop).Run()
		delete(vm.disks, t)
	}
}
