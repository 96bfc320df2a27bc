package testbed

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// inNetns runs fn on an OS thread switched into the network namespace of
// pid. A socket belongs to the namespace it was created in, so a listener
// or connection made by fn stays there after the thread switches back. If
// the switch back fails the thread stays locked and dies with fn's
// goroutine, so no other goroutine ever runs in the wrong namespace.
func inNetns(pid int, fn func() error) error {
	target, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		return fmt.Errorf("opening the network namespace of %d: %w", pid, err)
	}
	defer target.Close()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer self.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("entering the network namespace of %d: %w", pid, err)
			return
		}
		ferr := fn()
		if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("leaving the network namespace of %d: %w", pid, err)
			return // still locked: the thread exits with this goroutine
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// DialContext connects from the bed's switch, which reaches every VM
// address on the bridge, as a machine on the VMs' network would.
func (b *Bed) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := inNetns(b.sw.pid, func() error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// Listen listens on the switch, e.g. on 169.254.16.9:5030 for OneGate.
func (b *Bed) Listen(network, addr string) (net.Listener, error) {
	var ln net.Listener
	err := inNetns(b.sw.pid, func() error {
		var err error
		ln, err = net.Listen(network, addr)
		return err
	})
	return ln, err
}

// InSwitch runs fn with the switch's network namespace (for a server that
// listens by itself, such as onegatesim.Sim.Start).
func (b *Bed) InSwitch(fn func() error) error { return inNetns(b.sw.pid, fn) }

// SwitchDiag is the switch's view of the network (links, neighbours,
// bridge forwarding table), for failure messages.
func (b *Bed) SwitchDiag() string {
	var out strings.Builder
	for _, args := range [][]string{{"ip", "-br", "link"}, {"ip", "neigh"}, {"bridge", "fdb", "show", "br", "br0"}} {
		full := append([]string{"-t", fmt.Sprint(b.sw.pid), "-n"}, args...)
		o, err := exec.Command("nsenter", full...).CombinedOutput()
		fmt.Fprintf(&out, "$ %s (%v)\n%s", strings.Join(args, " "), err, o)
	}
	return out.String()
}

// DialContext connects from inside the VM's network namespace, so a test
// reaches what listens on its loopback (the local balancer) as the VM's
// own processes do.
func (vm *VM) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	pid := vm.Pid()
	if pid == 0 {
		return nil, fmt.Errorf("VM %s is not running", vm.Spec.Name)
	}
	var c net.Conn
	err := inNetns(pid, func() error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}
