package testbed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onekube/onekube/agent/internal/simcluster"
	"github.com/onekube/onekube/context/onegatesim"
)

// CNIManifestPath is where the appliance image keeps the flannel manifest
// (appliance/appliance.sh, ONEKUBE_CNI_DIR).
const CNIManifestPath = "/usr/share/onekube/cni/flannel.yaml"

// ServiceOptions describe a OneFlow service run on the bed.
type ServiceOptions struct {
	// Masters (0: 1) and Workers are the roles' cardinalities.
	Masters int
	Workers int
	// MaxMasters (0: Masters) is the master role's maximum, for a test
	// that scales masters in.
	MaxMasters int
	// CNIManifest is the image's flannel manifest.
	CNIManifest []byte
	// AgentArgs are appended to `onekube-agent bootstrap` (test knobs).
	AgentArgs []string
	// Sim configures the simulator; Dir, Listen and Endpoint are the bed's.
	Sim onegatesim.Options
	// NoServe masks onekube-serve.service on the masters, for tests that
	// tamper with the join data it would otherwise publish again.
	NoServe bool
	// ServeArgs are appended to `onekubed serve` (its unit's
	// ONEKUBE_SERVE_ARGS): shorter ticks for tests.
	ServeArgs []string
	// Upgrade starts onekube-upgrade.service (`onekubed upgrade-node`)
	// on every VM whose bootstrap succeeded, polling the plan every
	// UpgradeEvery (0: 2 s; the unit's default is 30 s).
	Upgrade      bool
	UpgradeEvery time.Duration
	// Context adds CONTEXT variables to every role's template_contents
	// (after the bed's own), as an operator would in the VM templates.
	Context map[string]string
	// Cooldown, when set, is every role's OneFlow cooldown (whole
	// seconds); the rendered template's otherwise (Sim.Cooldown only
	// applies to a role without one).
	Cooldown time.Duration
}

// Service is flow's rendered service instantiated by the OneGate/OneFlow
// simulator, each VM booted on the bed the moment OneFlow creates it, and
// the real onekube-agent started in it as its systemd unit would be.
type Service struct {
	Bed *Bed
	Sim *onegatesim.Sim
	ID  int

	o       ServiceOptions
	mu      sync.Mutex
	diskMu  sync.Mutex // plugDisks, one at a time
	vms     map[int]*VM
	runs    map[int][]*AgentRun
	daemons map[string]*AgentRun // "<vmid>/<lb|serve>"
	leaves  map[int][]string     // the output of each leave (service_power.go)
	wg      sync.WaitGroup
	ctx     context.Context
	stop    context.CancelFunc
}

// AgentRun is one run of `onekube-agent bootstrap` in a VM.
type AgentRun struct {
	VM         onegatesim.VMInfo
	Start, End time.Time
	Code       int   // exit code; -1 if it never ran or was killed
	Err        error // booting the VM or starting the agent failed
	output     lockedBuffer
	done       chan struct{}
	boot       int // the VM's boot it runs in (daemons)
	proc       *os.Process
}

// Output is what the agent wrote (its journal).
func (r *AgentRun) Output() string { return r.output.String() }

// Done is closed when the run is over.
func (r *AgentRun) Done() <-chan struct{} { return r.done }

// StartService serves OneGate on the switch at 169.254.16.9:5030 and
// instantiates flow's default service with o.Workers workers (deployment
// straight: workers once the master is READY).
func (b *Bed) StartService(o ServiceOptions) (*Service, error) {
	sim := o.Sim
	sim.Dir = filepath.Join(b.o.Dir, "onegate")
	sim.Listen = fmt.Sprintf("%s:%d", OneGateAddr, OneGatePort)
	sim.Endpoint = "http://" + sim.Listen
	tmpl, merge, err := serviceTemplate(o)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &Service{Bed: b, Sim: onegatesim.New(sim), o: o, vms: map[int]*VM{}, runs: map[int][]*AgentRun{}, leaves: map[int][]string{}, ctx: ctx, stop: stop}
	if err := b.InSwitch(func() error { _, err := s.Sim.Start(); return err }); err != nil {
		stop()
		return nil, fmt.Errorf("serving OneGate on the switch: %w", err)
	}
	s.Sim.OnVMCreated(s.launch)
	s.Sim.OnDiskChange(s.plugDisks)
	s.Sim.OnVMShutdown(s.acpi)
	s.Sim.OnVMPower(s.power)
	if s.ID, err = s.Sim.Instantiate(tmpl, merge); err != nil {
		s.Close()
		return nil, fmt.Errorf("instantiating: %w", err)
	}
	b.o.Logf("testbed: service %d instantiated (%d masters, %d workers); OneGate at %s", s.ID, max(o.Masters, 1), o.Workers, sim.Endpoint)
	return s, nil
}

// serviceTemplate is flow's rendered service for o, and the merge
// document `onetemplate instantiate` would send.
func serviceTemplate(o ServiceOptions) (tmpl, merge []byte, err error) {
	tmpl, merge, err = simcluster.TemplateForMasterMax(max(o.Masters, 1), o.MaxMasters, o.Workers, "straight")
	if err != nil {
		return nil, nil, err
	}
	vars := environmentContext()
	for k, v := range o.Context {
		vars[k] = v
	}
	if tmpl, err = withContext(tmpl, vars, o.Cooldown); err != nil {
		return nil, nil, err
	}
	if merge, err = withInputValues(merge, vars); err != nil {
		return nil, nil, err
	}
	return tmpl, merge, nil
}

// withInputValues answers the service's user inputs that vars names, as
// the owner would at instantiate: OneFlow writes every input's value
// into each role's CONTEXT over the role's own (context/onegatesim
// applies user_inputs_values so), so a CONTEXT variable that is also an
// input would otherwise get the input's default.
func withInputValues(merge []byte, vars map[string]string) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(merge, &doc); err != nil {
		return nil, fmt.Errorf("reading the merge template: %w", err)
	}
	values, _ := doc["user_inputs_values"].(map[string]any)
	for k, v := range vars {
		if _, ok := values[k]; ok {
			values[k] = v
		}
	}
	return json.Marshal(doc)
}

// environmentContext is what the bed's VM templates add to CONTEXT for the
// host's sake, as an operator of such a cloud would: the preflight checks
// the host makes fail (DECISIONS.md, ONEAPP_K8S_IGNORE_PREFLIGHT_ERRORS).
func environmentContext() map[string]string {
	ctx := map[string]string{}
	if ign := IgnoredPreflightErrors(); len(ign) > 0 {
		ctx["ONEAPP_K8S_IGNORE_PREFLIGHT_ERRORS"] = strings.Join(ign, ",")
	}
	return ctx
}

// withContext adds CONTEXT variables to every role's template_contents of
// a OneFlow 7 service template, and sets each role's cooldown if given.
func withContext(tmpl []byte, vars map[string]string, cooldown time.Duration) ([]byte, error) {
	if len(vars) == 0 && cooldown == 0 {
		return tmpl, nil
	}
	var doc map[string]any
	if err := json.Unmarshal(tmpl, &doc); err != nil {
		return nil, fmt.Errorf("reading the service template: %w", err)
	}
	roles, _ := doc["roles"].([]any)
	for _, r := range roles {
		role, _ := r.(map[string]any)
		if cooldown > 0 {
			role["cooldown"] = int(cooldown / time.Second)
		}
		tc, _ := role["template_contents"].(map[string]any)
		if tc == nil {
			return nil, errors.New("service template: a role has no template_contents")
		}
		ctx, _ := tc["CONTEXT"].(map[string]any)
		if ctx == nil {
			ctx = map[string]any{}
			tc["CONTEXT"] = ctx
		}
		for k, v := range vars {
			ctx[k] = v
		}
	}
	return json.Marshal(doc)
}

// launch boots the VM OneFlow just created and runs its agent.
func (s *Service) launch(info onegatesim.VMInfo) {
	r := &AgentRun{VM: info, Code: -1, done: make(chan struct{})}
	s.mu.Lock()
	s.runs[info.ID] = append(s.runs[info.ID], r)
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(r.done)
		spec := VMSpec{Name: fmt.Sprintf("vm-%d", info.ID), IP: info.IP, MAC: info.MAC}
		if s.o.CNIManifest != nil {
			spec.Files = map[string]File{CNIManifestPath: {Data: s.o.CNIManifest, Mode: 0o644}}
		}
		vm, err := s.Bed.Boot(spec)
		if err != nil {
			r.Err = err
			return
		}
		s.mu.Lock()
		s.vms[info.ID] = vm
		s.mu.Unlock()
		vm.OnBoot(func() { s.startUnits(vm, info) })
		if err := s.contextualize(vm, info); err != nil {
			r.Err = err
			return
		}
		s.ensureDaemon(vm, info, "lb")
		s.runAgent(vm, r, nil)
		if r.Code == 0 {
			s.afterBootstrap(vm, info)
		}
	}()
}

// contextualize does one-context's part of the boot: one_env in its
// runtime directory (/var/run/one-context, which is /run/one-context on
// systemd distributions), root-only (reference onegate.md §2.3).
func (s *Service) contextualize(vm *VM, info onegatesim.VMInfo) error {
	return vm.WriteFile("/run/one-context/one_env", OneEnv(s.Sim.Context(info.ID), info.Token.Reveal()), 0o400)
}

// OneEnv renders one_env as one-context's loc-16-gen-env writes it:
// TOKENTXT, VMID and ONEGATE_ENDPOINT first, then every context variable
// as `export KEY="value"`, nothing escaped.
func OneEnv(vars map[string]string, token string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "export TOKENTXT=%q\n", token)
	fmt.Fprintf(&b, "export VMID=\"%s\"\n", vars["VMID"])
	fmt.Fprintf(&b, "export ONEGATE_ENDPOINT=\"%s\"\n", vars["ONEGATE_ENDPOINT"])
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "export %s=\"%s\"\n", k, vars[k])
	}
	return []byte(b.String())
}

// runAgent runs `onekube-agent bootstrap` in the VM: no --context, so it
// finds one_env as in a real VM. extra are added to the service's
// AgentArgs (an operator's flag, e.g. --new-cluster).
func (s *Service) runAgent(vm *VM, r *AgentRun, extra []string) {
	args := append(append([]string{"bootstrap"}, s.o.AgentArgs...), extra...)
	cmd, err := vm.Command(s.ctx, nil, "onekube-agent", args...)
	if err != nil {
		r.Err = err
		return
	}
	cmd.Stdout, cmd.Stderr = &r.output, &r.output
	r.Start = time.Now()
	err = cmd.Run()
	r.End = time.Now()
	var ee *exec.ExitError
	switch {
	case err == nil:
		r.Code = 0
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	default:
		r.Err = err
	}
	s.Bed.o.Logf("testbed: VM %s: onekube-agent bootstrap exited %d after %s", vm.Spec.Name, r.Code, r.End.Sub(r.Start).Round(time.Millisecond))
}

// RunAgain runs a VM's agent once more (after a reboot, say),
// synchronously, with extra arguments added.
func (s *Service) RunAgain(vmid int, extra ...string) (*AgentRun, error) {
	s.mu.Lock()
	vm := s.vms[vmid]
	s.mu.Unlock()
	info, ok := s.Sim.VM(vmid)
	if vm == nil || !ok {
		return nil, fmt.Errorf("VM %d never booted", vmid)
	}
	r := &AgentRun{VM: info, Code: -1, done: make(chan struct{})}
	s.mu.Lock()
	s.runs[vmid] = append(s.runs[vmid], r)
	s.mu.Unlock()
	defer close(r.done)
	if err := s.contextualize(vm, info); err != nil {
		return r, err
	}
	s.ensureDaemon(vm, info, "lb")
	s.runAgent(vm, r, extra)
	if r.Code == 0 {
		s.afterBootstrap(vm, info)
	}
	return r, r.Err
}

// VM returns the bed VM of a OneGate VM ID.
func (s *Service) VM(vmid int) *VM {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.vms[vmid]
}

// Runs lists the latest agent run of every VM, by VM ID.
func (s *Service) Runs() []*AgentRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]int, 0, len(s.runs))
	for id := range s.runs {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	out := make([]*AgentRun, 0, len(ids))
	for _, id := range ids {
		rs := s.runs[id]
		out = append(out, rs[len(rs)-1])
	}
	return out
}

// Wait waits until n VMs have agent runs and every one has finished.
func (s *Service) Wait(ctx context.Context, n int) ([]*AgentRun, error) {
	for {
		runs := s.Runs()
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
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// AgentLogs is every agent run's output, for failure messages.
func (s *Service) AgentLogs() string {
	var b strings.Builder
	s.mu.Lock()
	ids := make([]int, 0, len(s.runs))
	for id := range s.runs {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		for i, r := range s.runs[id] {
			fmt.Fprintf(&b, "=== VM %d (%s): onekube-agent bootstrap, run %d, exit %d, err %v\n%s\n", id, r.VM.Role, i+1, r.Code, r.Err, r.Output())
		}
	}
	s.mu.Unlock()
	b.WriteString(s.daemonLogs()) // lb and serve of every VM
	return b.String()
}

// Close stops the simulator and the agents still running; the VMs stay
// until the bed closes.
func (s *Service) Close() {
	s.stop()
	_ = s.Sim.Close()
	s.wg.Wait()
}

// VMID parses a bed VM name back to its OneGate VM ID.
func VMID(vm *VM) (int, bool) {
	id, err := strconv.Atoi(strings.TrimPrefix(vm.Spec.Name, "vm-"))
	return id, err == nil
}

// plugDisks is the hypervisor after an attach or detach: the VM's devices
// become the disks oned now lists for it (read now, not from the hook's
// snapshot, so two quick changes cannot land in the wrong order).
func (s *Service) plugDisks(vmid int, _ []onegatesim.Disk) {
	s.diskMu.Lock()
	defer s.diskMu.Unlock()
	s.mu.Lock()
	vm := s.vms[vmid]
	s.mu.Unlock()
	if vm == nil {
		return
	}
	want := map[string]string{}
	for _, d := range s.Sim.Disks(vmid) {
		want[d.Target] = d.Source
	}
	if err := vm.SetDisks(want); err != nil {
		s.Bed.o.Logf("testbed: VM %d: plugging its disks: %v", vmid, err)
	}
}
