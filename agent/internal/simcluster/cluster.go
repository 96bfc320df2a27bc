package simcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	stenv "github.com/onekube/onekube/agent/internal/standin/env"
	"github.com/onekube/onekube/context/onegatesim"
)

// Options describe a simulated service.
type Options struct {
	// Dir holds one root per VM (vm-<id>/root), the contexts and the
	// stand-in log.
	Dir  string
	Bins Binaries
	// Masters and Workers are the roles' cardinalities (Masters 0: 1);
	// MaxWorkers is the worker role's max_vms when scaling beyond Workers.
	Masters             int
	Workers, MaxWorkers int
	// ControlPlane, when set, makes the cluster HA-capable: stand-ins
	// record etcd members in its etcd, and every master runs serve after
	// its bootstrap (masters.go).
	ControlPlane *ControlPlane
	// Deployment is "straight" (workers after the master is READY) or
	// "none" (every VM at once).
	Deployment string
	// Delay, when set, holds back the agent of a VM (e.g. the master, so
	// workers start first).
	Delay func(vm onegatesim.VMInfo) time.Duration
	// Skip, when set and true, never starts the agent of a VM (a master
	// that never publishes).
	Skip func(vm onegatesim.VMInfo) bool
	// BeforeStart runs just before a VM's agent starts (e.g. to break its
	// OneGate token).
	BeforeStart func(sim *onegatesim.Sim, vm onegatesim.VMInfo)
	// Args are extra bootstrap flags for every agent (poll intervals).
	Args []string
	// Env adds variables to every agent (e.g. ONEKUBE_STANDIN_FAIL).
	Env []string
	// CNIManifest is written to every root as the chosen CNI's manifest.
	CNIManifest string
	// Sim configures the simulator; its Dir defaults to <Dir>/sim.
	Sim onegatesim.Options
	// Living, when set, runs the cluster after bootstrap too (living.go).
	Living *Living
}

// Cluster is a running simulated service.
type Cluster struct {
	Sim        *onegatesim.Sim
	ServiceID  int
	StandinLog string
	Started    time.Time

	o      Options
	mu     sync.Mutex
	runs   map[int]*Run
	serves map[int]*Run
	// live are the processes of a living cluster (living.go), by VM.
	live map[int][]*Run
	wg   sync.WaitGroup
	ctx  context.Context
	stop context.CancelFunc
}

// Run is one agent process.
type Run struct {
	VM    onegatesim.VMInfo
	Root  string
	Args  []string
	Start time.Time
	End   time.Time
	Code  int   // exit code, -1 if killed
	Err   error // a start or wait failure other than a non-zero exit
	pid   int   // the process (and process group) ID, under Cluster.mu
	extra []string
	// started is set once the process runs (Start waits for it).
	started atomic.Bool
	output  lockedBuffer
	done    chan struct{}
}

// Output is what the process wrote to stdout and stderr.
func (r *Run) Output() string { return r.output.String() }

// Done is closed when the process has exited.
func (r *Run) Done() <-chan struct{} { return r.done }

// FlannelManifest stands in for the manifest the image carries: the
// objects of upstream's kube-flannel.yml the agent sets up (the pod network
// in net-conf.json, the interface on the DaemonSet), trimmed.
const FlannelManifest = `apiVersion: v1
kind: ConfigMap
metadata:
  name: kube-flannel-cfg
  namespace: kube-flannel
data:
  net-conf.json: |
    {"Network": "10.244.0.0/16", "Backend": {"Type": "vxlan"}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: kube-flannel-ds
  namespace: kube-flannel
spec:
  template:
    spec:
      hostNetwork: true
      containers:
      - name: kube-flannel
        image: ghcr.io/flannel-io/flannel:v0.27.4
        args: ["--ip-masq", "--kube-subnet-mgr"]
`

// CNIDir is where simcluster puts the CNI manifest in every root.
const CNIDir = "/usr/share/onekube/cni"

// Start renders flow's default service with o.Workers workers, starts the
// simulator and instantiates the service; every VM gets an agent process
// the moment the simulator creates it.
func Start(o Options) (*Cluster, error) {
	if o.Deployment == "" {
		o.Deployment = "straight"
	}
	if o.Sim.Dir == "" {
		o.Sim.Dir = filepath.Join(o.Dir, "sim")
	}
	if o.Living != nil {
		o.Living.setup(&o)
	}
	tmpl, merge, err := templateFor(max(o.Masters, 1), o.Workers, o.MaxWorkers, o.Deployment)
	if err != nil {
		return nil, err
	}
	if o.Sim.Cooldown != 0 {
		if tmpl, err = withCooldown(tmpl, o.Sim.Cooldown); err != nil {
			return nil, err
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	c := &Cluster{
		Sim:        onegatesim.New(o.Sim),
		StandinLog: filepath.Join(o.Dir, "standin.log"),
		o:          o,
		runs:       map[int]*Run{},
		serves:     map[int]*Run{},
		live:       map[int][]*Run{},
		ctx:        ctx,
		stop:       stop,
	}
	if _, err := c.Sim.Start(); err != nil {
		stop()
		return nil, err
	}
	c.Sim.OnVMCreated(c.launch)
	if o.Living != nil {
		c.Sim.OnVMShutdown(c.shutdown)
	}
	c.Started = time.Now()
	id, err := c.Sim.Instantiate(tmpl, merge)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("instantiating: %w", err)
	}
	c.ServiceID = id
	return c, nil
}

// launch starts the agent of a newly created VM.
func (c *Cluster) launch(vm onegatesim.VMInfo) {
	root := c.RootOf(vm.ID)
	if err := c.boot(vm); err != nil {
		r := &Run{VM: vm, Root: root, Code: -1, Err: err, done: make(chan struct{})}
		close(r.done)
		c.mu.Lock()
		c.runs[vm.ID] = r
		c.mu.Unlock()
		return
	}
	if c.o.Skip != nil && c.o.Skip(vm) {
		return
	}
	r := &Run{VM: vm, Root: root, done: make(chan struct{})}
	c.mu.Lock()
	c.runs[vm.ID] = r
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(r.done)
		if c.o.Delay != nil {
			select {
			case <-time.After(c.o.Delay(vm)):
			case <-c.ctx.Done():
				r.Code, r.Err = -1, c.ctx.Err()
				return
			}
		}
		if c.o.BeforeStart != nil {
			c.o.BeforeStart(c.Sim, vm)
		}
		r.Err = c.exec(r)
		if c.o.Living != nil {
			c.afterBootstrap(r) // serve as a living cluster runs it (living.go)
		} else {
			c.startServe(r)
		}
	}()
}

// exec runs r: bootstrap unless r.Args says otherwise.
func (c *Cluster) exec(r *Run) error {
	if r.Args == nil {
		r.Args = append(append([]string{"bootstrap", "--context", r.VM.ContextFile, "--root", r.Root, "--log-format", "json"}, c.o.Args...), r.extra...)
	}
	cmd := exec.CommandContext(c.ctx, c.o.Bins.For(r.Args), r.Args...)
	cmd.Env = c.env(r)
	cmd.Stdout, cmd.Stderr = &r.output, &r.output
	// Its own process group, so Kill and Close take the stand-ins the
	// agent runs down with it, as a power cut would.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	r.Start = time.Now()
	if err := cmd.Start(); err != nil {
		r.Code = -1
		return err
	}
	c.mu.Lock()
	r.pid = cmd.Process.Pid
	c.mu.Unlock()
	r.started.Store(true)
	err := cmd.Wait()
	r.End = time.Now()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
		return nil
	default:
		r.Code = -1
		return err
	}
}

// env is the agent's environment: this process's, without anything that
// would override the VM's context or reach a real service manager, plus
// the stand-ins first on PATH.
func (c *Cluster) env(r *Run) []string {
	drop := []string{"ONEGATE_ENDPOINT", "VMID", "TOKENTXT", "NOTIFY_SOCKET", "JOURNAL_STREAM", "PATH"}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(drop, k) && !strings.HasPrefix(k, "ONEKUBE_STANDIN_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"PATH="+c.o.Bins.StandinDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"ONEKUBE_STANDIN_ROOT="+r.Root,
		"ONEKUBE_STANDIN_LOG="+c.StandinLog,
		"ONEKUBE_STANDIN_NET="+c.NetDir(),
	)
	if cp := c.o.ControlPlane; cp != nil {
		env = append(env, "ONEKUBE_STANDIN_ETCD="+cp.EtcdURL)
		if c.o.Living == nil {
			// The real API server is the authority on tokens and Nodes,
			// as in a living cluster: serve mints the join tokens there,
			// and the stand-in's joins are judged and registered there.
			env = append(env, stenv.VarKube+"="+filepath.Dir(cp.Kubeconfig))
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append(env, c.o.Env...)
}

// SetEnv adds variables to every agent started from now on (RunAgain
// included); a later value of a variable wins over an earlier one.
func (c *Cluster) SetEnv(kv ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.o.Env = append(append([]string{}, c.o.Env...), kv...)
}

// RootOf is the root directory of a VM's agent.
func (c *Cluster) RootOf(vmid int) string {
	return filepath.Join(c.o.Dir, fmt.Sprintf("vm-%d", vmid), "root")
}

// Runs returns the agent runs started so far, by VM ID.
func (c *Cluster) Runs() []*Run {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*Run, 0, len(c.runs))
	for _, r := range c.runs {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *Run) int { return a.VM.ID - b.VM.ID })
	return out
}

// Wait waits until n agents have been started and all of them exited, or
// ctx ends.
func (c *Cluster) Wait(ctx context.Context, n int) ([]*Run, error) {
	for {
		runs := c.Runs()
		finished := 0
		for _, r := range runs {
			select {
			case <-r.done:
				finished++
			default:
			}
		}
		if len(runs) >= n && finished == len(runs) {
			return runs, nil
		}
		select {
		case <-ctx.Done():
			return runs, fmt.Errorf("waiting for %d agents (%d started, %d finished): %w", n, len(runs), finished, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Close kills agents still running and stops the simulator. The simulator
// closes first: its Close waits for the creation notices in flight, so no
// launch can call wg.Add while wg.Wait runs.
func (c *Cluster) Close() {
	c.stop()
	_ = c.Sim.Close()
	c.wg.Wait()
}

// Kill ends a VM's running agent and every process it started at once,
// with SIGKILL: a crash or power cut half-way through its work.
func (c *Cluster) Kill(vmid int) error {
	c.mu.Lock()
	r := c.runs[vmid]
	pid := 0
	if r != nil {
		pid = r.pid
	}
	c.mu.Unlock()
	if pid == 0 {
		return fmt.Errorf("VM %d has no running agent", vmid)
	}
	return syscall.Kill(-pid, syscall.SIGKILL)
}

// RunAgain runs a VM's agent once more, synchronously, with the same
// arguments (a reboot, or the operator starting the unit again); extra
// are added to the arguments.
func (c *Cluster) RunAgain(vmid int, extra ...string) (*Run, error) {
	r, err := c.Start(vmid, extra...)
	if err != nil {
		return nil, err
	}
	<-r.done
	return r, r.Err
}

// Start runs another agent of a VM at once, next to any running one (a
// manual run while the unit runs), and returns without waiting.
func (c *Cluster) Start(vmid int, extra ...string) (*Run, error) {
	vm, ok := c.Sim.VM(vmid)
	if !ok {
		return nil, fmt.Errorf("VM %d does not exist", vmid)
	}
	r := &Run{VM: vm, Root: c.RootOf(vmid), done: make(chan struct{}), extra: extra}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(r.done)
		r.Err = c.exec(r)
		c.startServe(r)
	}()
	for !r.started.Load() {
		select {
		case <-r.done:
			return r, nil
		case <-time.After(time.Millisecond):
		}
	}
	return r, nil
}

// Recreate is `onevm recover --recreate`: the VM keeps its ID, NICs and
// USER_TEMPLATE (what it published), its agent dies with the old host,
// and it boots again from a fresh disk.
func (c *Cluster) Recreate(vmid int) (*Run, error) {
	c.StopServe(vmid)
	if err := c.Kill(vmid); err == nil {
		c.mu.Lock()
		r := c.runs[vmid]
		c.mu.Unlock()
		<-r.done
	}
	// The old host's kubelet dies with it: its Node stops heartbeating
	// now, and stays Ready for the grace period (env.Node.Ready).
	if err := stenv.StopKubelet(c.RootOf(vmid)); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(c.RootOf(vmid)); err != nil {
		return nil, err
	}
	vm, ok := c.Sim.VM(vmid)
	if !ok {
		return nil, fmt.Errorf("VM %d does not exist", vmid)
	}
	if err := c.boot(vm); err != nil {
		return nil, err
	}
	return c.RunAgain(vmid)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
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
