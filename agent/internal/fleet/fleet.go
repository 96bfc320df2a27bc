package fleet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"github.com/onekube/onekube/agent"
	"github.com/onekube/onekube/agent/internal/simcluster"
	"github.com/onekube/onekube/context/onegatesim"
	"github.com/onekube/onekube/flow"
)

// Deployment modes of the service template.
const (
	Straight = "straight" // workers created once the master is READY
	None     = "none"     // every VM created at once
)

// Config is one run.
type Config struct {
	Workers    int
	Deployment string // Straight or None
	Model      Model  // zero: DefaultModel
	// Tunables are the agents' (zero: agent.DefaultTunables, production).
	Tunables agent.Tunables
	// Timeout bounds the run in real time (default 10 min); Stall is the
	// clock's watchdog (default 30 s of real time without any event).
	Timeout, Stall time.Duration
}

func (c Config) withDefaults() (Config, error) {
	if c.Workers < 1 {
		return c, fmt.Errorf("need at least one worker, got %d", c.Workers)
	}
	if c.Deployment != Straight && c.Deployment != None {
		return c, fmt.Errorf("deployment %q: want %s or %s", c.Deployment, Straight, None)
	}
	if c.Model == (Model{}) {
		c.Model = DefaultModel()
	}
	if reflect.ValueOf(c.Tunables).IsZero() { // not ==, which a new slice field would break
		c.Tunables = agent.DefaultTunables()
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Minute
	}
	if c.Stall == 0 {
		c.Stall = 30 * time.Second
	}
	return c, nil
}

// fleet is the state of one run, shared by the VMs' goroutines.
type fleet struct {
	cfg   Config
	dir   string
	ca    []byte
	clock *VClock
	sim   *onegatesim.Sim
	g     time.Duration // OneFlow's delay this run (straight)
	base  http.RoundTripper
	wg    sync.WaitGroup

	mu           sync.Mutex
	t0           time.Time // instantiate
	vms          map[int]*vmRun
	created      int
	releaseFirst func() // the hold until the first VMs exist
	// releaseWorkers is the hold from the master's READY=YES until the
	// simulator created every worker (straight).
	releaseWorkers func()
	published      time.Time // the master's last PUT with READY=YES
	requests       []request
	timeline       []Entry
}

// Run instantiates 1 master + cfg.Workers workers and waits for every
// agent. The error says which agents failed, or dumps the clock; the
// result is filled as far as the run got.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	realStart := time.Now()
	dir, err := os.MkdirTemp("", "onekube-fleet")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ca, err := caPEM()
	if err != nil {
		return nil, err
	}
	// Near the real time, so anything stamped with the wall clock (the
	// CA) agrees with the agents' virtual one.
	clock := NewVClock(time.Now().UTC().Truncate(time.Second), cfg.Stall)
	defer clock.Close()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 1024 // every agent wakes at once: reuse, do not churn ports
	f := &fleet{cfg: cfg, dir: dir, ca: ca, clock: clock, g: cfg.Model.G, base: tr, vms: map[int]*vmRun{}}

	// Each role on its own VM template, whose CONTEXT the VMs see as oned
	// builds it: ROLE_NAME (workers spread their start), and a straight
	// worker's ONEKUBE_MASTER_VM_ID.
	tmpl, merge, contexts, err := simcluster.TemplateWithContexts(cfg.Workers, cfg.Deployment)
	if err != nil {
		return nil, err
	}
	f.sim = onegatesim.New(onegatesim.Options{
		Dir: filepath.Join(dir, "sim"),
		// TEST-NET-1 (the default) has room for 253 VMs.
		Network:          netip.MustParsePrefix("10.20.0.0/16"),
		Clock:            clock.Now,
		TemplateContexts: contexts,
	})
	defer func() {
		tr.CloseIdleConnections() // else the server waits on them
		f.sim.Close()
	}()
	if _, err := f.sim.Start(); err != nil {
		return nil, err
	}
	f.releaseFirst = clock.Hold("the simulator creating the first VMs")
	// Every VM's goroutine is counted before any starts (the simulator
	// calls OnVMCreated asynchronously).
	f.wg.Add(1 + cfg.Workers)
	f.sim.OnVMCreated(f.vmCreated)
	f.mu.Lock()
	f.t0 = clock.Now()
	f.mu.Unlock()
	runCtx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if _, err := f.sim.Instantiate(tmpl, merge); err != nil {
		return nil, err
	}
	if err := f.wait(runCtx); err != nil {
		return nil, err
	}
	res := f.result()
	res.Real = time.Since(realStart)
	if err := f.failures(); err != nil {
		return res, err
	}
	waitCtx, cancelWait := context.WithTimeout(ctx, 30*time.Second)
	defer cancelWait()
	if err := f.sim.WaitServiceRunning(waitCtx); err != nil {
		return res, fmt.Errorf("every agent done, but the service: %w", err)
	}
	return res, nil
}

// wait returns once every VM's goroutine ended, the clock failed, or the
// real-time bound passed.
func (f *fleet) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
		return f.clock.Err()
	case <-f.clock.Dead():
		return f.clock.Err()
	case <-ctx.Done():
		// Failing the clock wakes every sleeper, so the agents end.
		f.clock.Fail(fmt.Sprintf("fleet of %d workers (%s): %v", f.cfg.Workers, f.cfg.Deployment, ctx.Err()))
		return f.clock.Err()
	}
}

// failures names the agents that failed (the first few) and how many.
func (f *fleet) failures() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	n := 0
	for _, v := range f.vms {
		if v.err != nil {
			if n++; n <= 5 {
				errs = append(errs, fmt.Errorf("VM %d (%s): %w", v.info.ID, v.info.Role, v.err))
			}
		}
	}
	if len(f.vms) != 1+f.cfg.Workers {
		errs = append(errs, fmt.Errorf("%d VMs created, want %d", len(f.vms), 1+f.cfg.Workers))
	}
	if n > 0 {
		errs = append(errs, fmt.Errorf("%d of %d agents failed", n, len(f.vms)))
	}
	return errors.Join(errs...)
}

// put sees a VM's PUT /vm before it goes out. The master's READY=YES is
// its publish; in straight mode it also makes the simulator create the
// workers, so time is held until they all exist.
func (f *fleet) put(v *vmRun, at time.Time, u update) {
	f.mu.Lock()
	t0 := f.t0
	f.mu.Unlock()
	f.note(v, at, describe(u, t0))
	if u.erase || u.keys["READY"] != "YES" || v.info.Role != flow.RoleMaster {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.published = at
	if f.cfg.Deployment == Straight && f.releaseWorkers == nil {
		f.releaseWorkers = f.clock.Hold(fmt.Sprintf("the simulator creating %d workers after the master's READY=YES", f.cfg.Workers))
	}
}

// record keeps one OneGate request.
func (f *fleet) record(r request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r)
}
