package testbed

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ImageHostname is the hostname every VM boots with: the appliance image is
// built in a VM named onekube-build (appliance/packer/gen_context), and
// one-context changes it only when the template asks (SET_HOSTNAME). As in
// a real cloud, every VM of a service starts with the same one; making node
// names unique is the agent's job, not the bed's.
const ImageHostname = "onekube-build"

// VMPath is the PATH of processes in a VM (a systemd service's).
const VMPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Paths of the played parts inside a VM.
const (
	fakeNodePath = "/usr/lib/testbed/fakenode"
	imagesDir    = "/usr/lib/testbed/images"
)

// VMSpec describes a VM.
type VMSpec struct {
	// Name labels the VM in logs and names its directory (unique per bed).
	Name string
	IP   netip.Addr
	// MAC of eth0 (optional; OpenNebula's is 02:00 and the IPv4 address).
	MAC string
	// Hostname the image boots with; default ImageHostname.
	Hostname string
	// Files are written to the VM's disk before its first boot, by absolute
	// path under /etc, /var or /usr (the image's content, e.g. a CNI
	// manifest).
	Files map[string]File
}

// File is a file's content and mode.
type File struct {
	Data []byte
	Mode os.FileMode
}

// VM is one simulated host.
type VM struct {
	Spec VMSpec
	bed  *Bed
	dir  string

	mu     sync.Mutex
	h      *holder
	boots  int
	output []string           // vminit output of earlier boots
	onBoot func()             // the VM's enabled units, started after each later boot
	disks  map[string]hotDisk // hot-plugged, by target (hotplug.go)
}

// OnBoot sets what every later boot starts once the VM is up, as systemd
// starts a VM's enabled units: without it a power cycle would leave the
// VM without the daemons a real one has.
func (vm *VM) OnBoot(f func()) {
	vm.mu.Lock()
	vm.onBoot = f
	vm.mu.Unlock()
}

// Boot creates a VM and boots it: disk, namespaces, network, services.
func (b *Bed) Boot(spec VMSpec) (*VM, error) {
	if spec.Hostname == "" {
		spec.Hostname = ImageHostname
	}
	if !b.o.Network.Contains(spec.IP) {
		return nil, fmt.Errorf("VM %s: IP %s is outside the bed's network %s", spec.Name, spec.IP, b.o.Network)
	}
	vm := &VM{Spec: spec, bed: b, dir: filepath.Join(b.o.Dir, spec.Name)}
	if err := vm.prepareDisk(); err != nil {
		return nil, fmt.Errorf("VM %s: preparing its disk: %w", spec.Name, err)
	}
	b.mu.Lock()
	b.vms = append(b.vms, vm)
	b.mu.Unlock()
	if err := vm.PowerOn(); err != nil {
		return vm, err
	}
	return vm, nil
}

// VMs lists the VMs booted so far.
func (b *Bed) VMs() []*VM {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*VM{}, b.vms...)
}

// PowerOn boots the VM from its disk: a fresh /run and /tmp, its network
// plugged in, then its services (containerd and the kubelet, both played
// by fakenode). Booting a running VM is an error.
func (vm *VM) PowerOn() error {
	if err := vm.powerOn(); err != nil {
		return err
	}
	vm.mu.Lock()
	f := vm.onBoot
	vm.mu.Unlock()
	if f != nil {
		f()
	}
	return nil
}

func (vm *VM) powerOn() error {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	if vm.h != nil {
		return fmt.Errorf("VM %s is running", vm.Spec.Name)
	}
	b := vm.bed
	args := []string{
		"--disk", filepath.Join(vm.dir, "disk"),
		"--hostname", vm.Spec.Hostname,
		// The appliance's /etc/sysctl.d/90-onekube.conf; the bridge
		// sysctls need br_netfilter, which a namespace cannot load.
		"--sysctl", "net.ipv4.ip_forward=1",
		"--unit-active", "containerd", "--unit-active", "kubelet",
		"--service", "fakenode=" + fakeNodePath + " --image-dir " + imagesDir,
		"--wait-for", "/run/containerd/containerd.sock",
	}
	flags := uintptr(syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET)
	h, err := startHolder(b.o.Bins.VMInit, args, flags)
	if err != nil {
		return fmt.Errorf("VM %s: starting vminit: %w", vm.Spec.Name, err)
	}
	fail := func(err error) error {
		h.kill()
		vm.output = append(vm.output, h.output.String())
		return fmt.Errorf("VM %s: %w\nvminit said:\n%s", vm.Spec.Name, err, h.output.String())
	}
	if line, err := h.readLine(30 * time.Second); err != nil || line != "mounted" {
		return fail(fmt.Errorf("mounting its disk: got %q (%v)", line, err))
	}
	if err := vm.plug(h.pid); err != nil {
		return fail(err)
	}
	if _, err := h.stdin.Write([]byte("boot\n")); err != nil {
		return fail(err)
	}
	if line, err := h.readLine(30 * time.Second); err != nil || line != "booted" {
		return fail(fmt.Errorf("booting: got %q (%v)", line, err))
	}
	vm.h = h
	vm.boots++
	if err := vm.writeDisksLocked(); err != nil {
		return fmt.Errorf("VM %s: its hot-plugged disks: %w", vm.Spec.Name, err)
	}
	b.mem.watch(h.pid)
	b.o.Logf("testbed: VM %s booted (%s, hostname %s, pid %d)", vm.Spec.Name, vm.Spec.IP, vm.Spec.Hostname, h.pid)
	return nil
}

// plug connects the VM to the bridge: a veth pair whose VM end becomes
// eth0 with the VM's address and a default route through the switch.
func (vm *VM) plug(pid int) error {
	b := vm.bed
	b.mu.Lock()
	b.nics++
	n := b.nics
	b.mu.Unlock()
	port, peer := fmt.Sprintf("p%d", n), fmt.Sprintf("e%d", n)
	steps := []struct {
		pid  int
		args []string
	}{
		{b.sw.pid, []string{"link", "add", port, "type", "veth", "peer", "name", peer}},
		{b.sw.pid, []string{"link", "set", peer, "netns", fmt.Sprint(pid)}},
		{b.sw.pid, []string{"link", "set", port, "master", "br0", "up"}},
		{pid, []string{"link", "set", "lo", "up"}},
		{pid, []string{"link", "set", peer, "name", "eth0"}},
		{pid, []string{"addr", "add", netip.PrefixFrom(vm.Spec.IP, b.o.Network.Bits()).String(), "dev", "eth0"}},
		{pid, []string{"link", "set", "eth0", "up"}},
		{pid, []string{"route", "add", "default", "via", b.Gateway().String(), "dev", "eth0", "onlink"}},
	}
	if vm.Spec.MAC != "" {
		steps = append(steps[:5], append([]struct {
			pid  int
			args []string
		}{{pid, []string{"link", "set", "eth0", "address", vm.Spec.MAC}}}, steps[5:]...)...)
	}
	for _, s := range steps {
		if err := b.ipIn(s.pid, s.args...); err != nil {
			return fmt.Errorf("plugging the network in: %w", err)
		}
	}
	return nil
}

// PowerOff cuts the VM's power: every process dies at once and /run is
// lost; the disk stays. Powering off a stopped VM does nothing.
func (vm *VM) PowerOff() error {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	if vm.h == nil {
		return nil
	}
	vm.h.kill()
	vm.stopped()
	return nil
}

// Shutdown stops the VM cleanly: SIGTERM to every process, SIGKILL after
// 10 s.
func (vm *VM) Shutdown() error {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	if vm.h == nil {
		return nil
	}
	vm.h.terminate(15 * time.Second)
	vm.stopped()
	return nil
}

func (vm *VM) stopped() {
	vm.output = append(vm.output, vm.h.output.String())
	vm.bed.mem.unwatch(vm.h.pid)
	vm.h = nil
	vm.bed.o.Logf("testbed: VM %s stopped", vm.Spec.Name)
}

// Reboot is a power cut followed by a boot from the same disk.
func (vm *VM) Reboot() error {
	if err := vm.PowerOff(); err != nil {
		return err
	}
	return vm.PowerOn()
}

// Boots counts the VM's boots so far.
func (vm *VM) Boots() int {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	return vm.boots
}

// Pid is the VM's init process (0 when stopped).
func (vm *VM) Pid() int {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	if vm.h == nil {
		return 0
	}
	return vm.h.pid
}

// Command prepares a command run inside the VM, in all its namespaces,
// with a service's clean environment (PATH, HOME, LANG, plus env). If ctx
// ends or this process dies, the command is killed.
func (vm *VM) Command(ctx context.Context, env []string, name string, args ...string) (*exec.Cmd, error) {
	pid := vm.Pid()
	if pid == 0 {
		return nil, fmt.Errorf("VM %s is not running", vm.Spec.Name)
	}
	full := []string{"-t", fmt.Sprint(pid), "-n", "-m", "-u", "-i", "-p", "--wd=/", "--",
		"setpriv", "--pdeathsig", "KILL", "--", "env", "-i", "PATH=" + VMPath, "HOME=/root", "LANG=C.UTF-8"}
	full = append(full, env...)
	full = append(append(full, name), args...)
	cmd := exec.CommandContext(ctx, "nsenter", full...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd, nil
}

// Run runs a command in the VM and returns its combined output.
func (vm *VM) Run(ctx context.Context, name string, args ...string) (string, error) {
	cmd, err := vm.Command(ctx, nil, name, args...)
	if err != nil {
		return "", err
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("VM %s: %s %s: %w", vm.Spec.Name, name, strings.Join(args, " "), err)
	}
	return string(out), nil
}

// ReadFile reads a file as the running VM sees it.
func (vm *VM) ReadFile(path string) ([]byte, error) {
	pid := vm.Pid()
	if pid == 0 {
		return nil, fmt.Errorf("VM %s is not running", vm.Spec.Name)
	}
	return os.ReadFile(fmt.Sprintf("/proc/%d/root%s", pid, path))
}

// WriteFile writes a file into the running VM (its parents created 0755).
func (vm *VM) WriteFile(path string, data []byte, mode os.FileMode) error {
	pid := vm.Pid()
	if pid == 0 {
		return fmt.Errorf("VM %s is not running", vm.Spec.Name)
	}
	p := fmt.Sprintf("/proc/%d/root%s", pid, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		return err
	}
	return os.Chmod(p, mode)
}
