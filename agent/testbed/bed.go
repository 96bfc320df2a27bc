package testbed

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SwitchMAC is the bridge's own address, locally administered.
const SwitchMAC = "02:0e:6b:00:00:01"

// OneGateAddr is where VMs reach OneGate: the link-local address of
// OpenNebula 6.10+'s transparent proxy (reference onegate.md §1.1).
var OneGateAddr = netip.MustParseAddr("169.254.16.9")

// OneGatePort is OneGate's port.
const OneGatePort = 5030

// Options describe a bed.
type Options struct {
	// Dir holds every VM's disk and logs; it should outlive a failed test
	// (the logs are read from it).
	Dir  string
	Bins Binaries
	// Network is the VMs' subnet; its first host address is the gateway,
	// which the switch answers on (192.0.2.0/24 by default, the OneGate
	// simulator's pool).
	Network netip.Prefix
	// Logf receives the bed's progress lines (default: discarded).
	Logf func(format string, args ...any)
}

// Bed is a switch and the VMs plugged into it.
type Bed struct {
	o  Options
	sw *holder

	mu   sync.Mutex
	vms  []*VM
	nics int
	mem  *memSampler

	imagesOnce sync.Once
	images     []string // releaseImages
	imagesErr  error
}

// holder is a vminit process that holds namespaces.
type holder struct {
	pid    int
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Reader
	output *lockedBuffer
	done   chan struct{}
}

// Start creates the switch: a network namespace with a bridge that owns
// the gateway address and OneGate's link-local address.
func Start(o Options) (*Bed, error) {
	if !o.Network.IsValid() {
		o.Network = netip.MustParsePrefix("192.0.2.0/24")
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	sw, err := startHolder(o.Bins.VMInit, []string{"--switch"}, syscall.CLONE_NEWNET)
	if err != nil {
		return nil, fmt.Errorf("starting the switch: %w", err)
	}
	if line, err := sw.readLine(10 * time.Second); err != nil || line != "ready" {
		sw.kill()
		return nil, fmt.Errorf("starting the switch: got %q (%v)", line, err)
	}
	b := &Bed{o: o, sw: sw}
	gw := b.Gateway()
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		// A fixed MAC: a bridge without one takes its lowest port's, so
		// booting a VM whose veth sorts lower changed the gateway's MAC
		// under every VM's ARP cache, and traffic to OneGate (routed via
		// the gateway) stalled for seconds until each VM re-resolved it
		// (net/bridge/br_stp_if.c, br_stp_recalculate_bridge_id: it keeps
		// an address set by the user, NET_ADDR_SET).
		{"link", "add", "br0", "address", SwitchMAC, "type", "bridge"},
		{"addr", "add", netip.PrefixFrom(gw, o.Network.Bits()).String(), "dev", "br0"},
		{"addr", "add", OneGateAddr.String() + "/32", "dev", "br0"},
		{"link", "set", "br0", "up"},
	} {
		if err := b.ipIn(sw.pid, args...); err != nil {
			sw.kill()
			return nil, err
		}
	}
	b.mem = startMemSampler(b)
	o.Logf("testbed: switch up (bridge %s, OneGate address %s)", netip.PrefixFrom(gw, o.Network.Bits()), OneGateAddr)
	return b, nil
}

// Gateway is the switch's address on the VMs' network.
func (b *Bed) Gateway() netip.Addr { return b.o.Network.Addr().Next() }

// Close powers every VM off and removes the switch. It is safe to call
// more than once and after a failed start of any VM.
func (b *Bed) Close() error {
	b.mu.Lock()
	vms := append([]*VM{}, b.vms...)
	b.mu.Unlock()
	var errs []error
	for _, vm := range vms {
		if err := vm.PowerOff(); err != nil {
			errs = append(errs, err)
		}
		vm.releaseDisks()
	}
	if b.mem != nil {
		b.mem.stop()
	}
	b.sw.kill()
	return errors.Join(errs...)
}

// PeakRSS is the largest total resident memory of every process of the bed
// (all VMs, and this test process) seen so far, sampled every 250 ms.
func (b *Bed) PeakRSS() int64 { return b.mem.peak() }

// ipIn runs ip(8) in the network namespace of pid.
// SwitchLink is `ip -br link show br0` in the switch: the bridge's
// state and address.
func (b *Bed) SwitchLink() (string, error) {
	out, err := exec.Command("nsenter", "-t", fmt.Sprint(b.sw.pid), "-n", "ip", "-br", "link", "show", "br0").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ip link show br0: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

func (b *Bed) ipIn(pid int, args ...string) error {
	full := append([]string{"-t", fmt.Sprint(pid), "-n", "ip"}, args...)
	out, err := exec.Command("nsenter", full...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// startHolder starts vminit in new namespaces, as a child that dies with
// this process.
func startHolder(bin string, args []string, flags uintptr) (*holder, error) {
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flags, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	out := &lockedBuffer{}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &holder{pid: cmd.Process.Pid, cmd: cmd, stdin: stdin, lines: bufio.NewReader(io.TeeReader(stdout, out)), output: out, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(h.done)
	}()
	return h, nil
}

// readLine reads one status line of vminit.
func (h *holder) readLine(timeout time.Duration) (string, error) {
	type res struct {
		s   string
		err error
	}
	c := make(chan res, 1)
	go func() {
		s, err := h.lines.ReadString('\n')
		c <- res{strings.TrimSpace(s), err}
	}()
	select {
	case r := <-c:
		return r.s, r.err
	case <-time.After(timeout):
		return "", fmt.Errorf("no answer from vminit in %s", timeout)
	}
}

// kill ends the holder and, with it, its namespaces and every process in
// its PID namespace; it returns once the holder is reaped.
func (h *holder) kill() {
	if h == nil {
		return
	}
	_ = h.cmd.Process.Kill()
	<-h.done
}

// terminate asks vminit for a clean shutdown, then kills it after timeout.
func (h *holder) terminate(timeout time.Duration) {
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.done:
	case <-time.After(timeout):
		h.kill()
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
