package simcluster

import (
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	"github.com/onekube/onekube/agent/internal/standin/env"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/context/onegatesim"
)

// Living makes a simulated service a living cluster, the part after
// bootstrap:
//   - a real API server (agent/testbed/loopback) behind the stand-ins:
//     the stand-in kubeadm creates init's token and every Node there and
//     checks join tokens against it (env.VarKube);
//   - on each master whose bootstrap succeeded, `onekubed serve`, as
//     onekube-bootstrap.service's ExecStartPost starts it;
//   - OpenNebula's soft terminate on scale-down: the VM's LCM_STATE goes
//     SHUTDOWN, its serve is stopped and `onekubed leave` runs, as
//     systemd stopping onekube-serve and onekube-node would, then the VM
//     is destroyed (Sim.PoweredOff), or at the simulator's timeout;
//   - terminate-hard (TerminateHard): the VM's processes die with it;
//   - a virtual clock (Advance) shared by onekube-agent and onekubed
//     (built with -tags simclock), the stand-ins and the simulator.
//
// What stays real: every process and socket, OneGate's protocol, the API
// server with its bootstrap authenticator, Node authorizer and
// NodeRestriction, client-go's leader election (real time). What is
// virtual: the clocks of agents, stand-ins and simulator, which move with
// the wall clock plus the offset Advance adds. A token the agents think
// expired by the virtual clock is not expired for the real API server;
// serve deletes it anyway, and the stand-in's join judges expiry by the
// virtual clock, so a join with it is refused as kubeadm would refuse it.
// Jumping the clock while a worker waits would run out its deadlines:
// advance it only while the cluster is idle.
type Living struct {
	// KubeDir holds the real API server's admin.conf, ca.crt and ca.key
	// (loopback.Server.Dir).
	KubeDir string
	// ServeArgs and LeaveArgs are extra flags (serve's hidden tick flags).
	ServeArgs, LeaveArgs []string

	clock system.FileClock
}

func (l *Living) setup(o *Options) {
	l.clock = system.FileClock{Path: filepath.Join(o.Dir, "clock")}
	if o.Sim.Clock == nil {
		o.Sim.Clock = l.clock.Now
	}
	if o.Sim.ShutdownTimeout == 0 {
		o.Sim.ShutdownTimeout = 180 * time.Second // kvmrc's SHUTDOWN_TIMEOUT
	}
	o.Env = append(append([]string{}, o.Env...), env.VarKube+"="+l.KubeDir, env.VarClock+"="+l.clock.Path)
}

// Now is the simulated cluster's virtual time.
func (c *Cluster) Now() time.Time { return c.o.Living.clock.Now() }

// Advance moves the virtual clock of every VM and of the simulator.
func (c *Cluster) Advance(d time.Duration) error { return c.o.Living.clock.Advance(d) }

// afterBootstrap starts serve on a master whose bootstrap succeeded.
func (c *Cluster) afterBootstrap(r *Run) {
	if c.o.Living == nil || r.Code != 0 || r.Err != nil || r.VM.Role != "master" || c.ctx.Err() != nil {
		return
	}
	args := append([]string{"serve", "--context", r.VM.ContextFile, "--root", r.Root, "--log-format", "json",
		"--kubeconfig", env.RealAdminConf}, c.o.Living.ServeArgs...)
	c.startLive(r.VM, args)
}

// startLive runs a long-lived process of a VM (serve).
func (c *Cluster) startLive(vm onegatesim.VMInfo, args []string) *Run {
	r := &Run{VM: vm, Root: c.RootOf(vm.ID), Args: args, done: make(chan struct{})}
	c.mu.Lock()
	c.live[vm.ID] = append(c.live[vm.ID], r)
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(r.done)
		r.Err = c.exec(r)
	}()
	return r
}

// Live returns a VM's long-lived processes (serve) and its leave runs.
func (c *Cluster) Live(vmid int) []*Run {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Run(nil), c.live[vmid]...)
}

// stopLive ends a VM's long-lived processes: SIGTERM, as systemd stops a
// unit (serve releases its lease), then SIGKILL after grace.
func (c *Cluster) stopLive(vmid int, sig syscall.Signal, grace time.Duration) {
	for _, r := range c.Live(vmid) {
		c.mu.Lock()
		pid := r.pid
		c.mu.Unlock()
		if pid == 0 {
			continue
		}
		_ = syscall.Kill(-pid, sig)
		select {
		case <-r.done:
		case <-time.After(grace):
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			<-r.done
		}
	}
}

// shutdown is the guest's side of a soft terminate: systemd stops serve
// and onekube-node.service (whose ExecStop is `leave`), then the VM
// powers off.
func (c *Cluster) shutdown(vm onegatesim.VMInfo) {
	if c.ctx.Err() != nil {
		return
	}
	c.stopLive(vm.ID, syscall.SIGTERM, 30*time.Second)
	args := append([]string{"leave", "--context", vm.ContextFile, "--root", c.RootOf(vm.ID), "--log-format", "json"}, c.o.Living.LeaveArgs...)
	r := &Run{VM: vm, Root: c.RootOf(vm.ID), Args: args, done: make(chan struct{})}
	c.mu.Lock()
	c.live[vm.ID] = append(c.live[vm.ID], r)
	c.mu.Unlock()
	r.Err = c.exec(r)
	close(r.done)
	if c.ctx.Err() == nil {
		_ = c.Sim.PoweredOff(vm.ID)
	}
}

// TerminateHard is `onevm terminate --hard`: the VM and every process in
// it end at once, with no shutdown inside the guest.
func (c *Cluster) TerminateHard(vmid int) error {
	if _, ok := c.Sim.VM(vmid); !ok {
		return fmt.Errorf("VM %d does not exist", vmid)
	}
	c.stopLive(vmid, syscall.SIGKILL, time.Second)
	return c.Sim.TerminateHard(vmid)
}
