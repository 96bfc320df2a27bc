package testbed

import (
	"fmt"
	"strings"
	"time"

	"github.com/onekube/onekube/context/onegatesim"
)

// The long-running units of the appliance, started in a VM as systemd
// would: onekube-lb.service before bootstrap on every VM (kubeadm reaches
// the API servers through it), onekube-serve.service on a master once its
// bootstrap succeeded. Each lives until its VM powers off; starting one
// that still runs does nothing.

// startUnits is a later boot of a VM of the service: one-context writes
// one_env again, then the enabled units start: onekube-lb always,
// onekube-serve on a master whose bootstrap finished (its
// ConditionPathExists). onekube-bootstrap is the test's to run
// (RunAgain), since tests assert on that run.
func (s *Service) startUnits(vm *VM, info onegatesim.VMInfo) {
	if err := s.contextualize(vm, info); err != nil {
		s.Bed.o.Logf("testbed: VM %d: one-context after boot: %v", info.ID, err)
		return
	}
	s.ensureDaemon(vm, info, "lb")
	if info.Role != "master" || s.o.NoServe {
		return
	}
	for _, p := range []string{"/var/lib/onekube/bootstrap.done", "/etc/kubernetes/admin.conf"} {
		if _, err := vm.ReadFile(p); err != nil {
			return
		}
	}
	s.ensureDaemon(vm, info, "serve")
}

// ensureDaemon starts `onekubed <name>` in vm unless it runs.
func (s *Service) ensureDaemon(vm *VM, info onegatesim.VMInfo, name string) {
	key := fmt.Sprintf("%d/%s", info.ID, name)
	boot := vm.Boots()
	s.mu.Lock()
	if s.daemons == nil {
		s.daemons = map[string]*AgentRun{}
	}
	if d := s.daemons[key]; d != nil {
		if d.boot != boot {
			// Started in a boot before a power cut: it ends within
			// moments, as its namespace dies.
			s.mu.Unlock()
			select {
			case <-d.done:
			case <-time.After(10 * time.Second):
			}
			s.mu.Lock()
		} else {
			select {
			case <-d.done:
			default:
				s.mu.Unlock()
				return
			}
		}
	}
	d := &AgentRun{VM: info, Code: -1, done: make(chan struct{}), boot: boot}
	s.daemons[key] = d
	s.mu.Unlock()
	args := []string{name, "--log-format", "text"}
	if name == "serve" {
		args = append(args, s.o.ServeArgs...)
	}
	cmd, err := vm.Command(s.ctx, nil, "onekubed", args...)
	if err != nil {
		d.Err = err
		close(d.done)
		return
	}
	cmd.Stdout, cmd.Stderr = &d.output, &d.output
	d.Start = time.Now()
	if err := cmd.Start(); err != nil {
		d.Err = err
		close(d.done)
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(d.done)
		err := cmd.Wait()
		d.End = time.Now()
		if err == nil {
			d.Code = 0
		}
	}()
	if name == "lb" {
		// Type=notify: bootstrap starts once the balancer listens.
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(d.output.String(), "balancing the API servers") && time.Now().Before(deadline) {
			select {
			case <-d.done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
}

// Daemon returns the output of a VM's `onekubed <name>` (lb, serve).
func (s *Service) Daemon(vmid int, name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.daemons[fmt.Sprintf("%d/%s", vmid, name)]; d != nil {
		return d.Output()
	}
	return ""
}

// daemonLogs is every daemon's output, for failure messages.
func (s *Service) daemonLogs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for k, d := range s.daemons {
		fmt.Fprintf(&b, "=== onekubed %s (VM/unit %s), err %v\n%s\n", k[strings.Index(k, "/")+1:], k, d.Err, d.Output())
	}
	return b.String()
}

// StartServe starts `onekubed serve` on a master of a service run with
// NoServe, as its unit would: for tests that mask it only for a while.
func (s *Service) StartServe(vmid int) error {
	vm := s.VM(vmid)
	info, ok := s.Sim.VM(vmid)
	if vm == nil || !ok {
		return fmt.Errorf("VM %d never booted", vmid)
	}
	s.ensureDaemon(vm, info, "serve")
	return nil
}
