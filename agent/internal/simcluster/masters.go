package simcluster

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/onekube/onekube/agent/internal/standin/env"
	"github.com/onekube/onekube/agent/testbed/loopback"
	"github.com/onekube/onekube/context/onegatesim"
	"github.com/onekube/onekube/flow"
)

// ControlPlane is what a simulated HA cluster shares besides its VMs: a
// real API server that serve's leader election and the bootstrap tokens it
// mints live in, and a real etcd that holds the cluster's etcd membership
// (the stand-in adds a member for each control plane; serve's etcd
// client lists and removes them). With it, every master runs `onekubed
// serve` once its bootstrap succeeded, as onekube-serve.service does.
type ControlPlane struct {
	// Kubeconfig is an admin credential for the API server.
	Kubeconfig string
	// EtcdURL is the etcd client URL (env.VarEtcd).
	EtcdURL string
}

// ServeKubeconfig is where each master's root gets the shared API
// server's credential for serve (--kubeconfig).
const ServeKubeconfig = "/etc/kubernetes/onekube-sim-serve.conf"

// TemplateFor renders flow's default cluster with masters and workers.
func TemplateFor(masters, workers int, deployment string) (tmpl, merge []byte, err error) {
	return templateFor(masters, workers, 0, deployment)
}

// TemplateForMasterMax is TemplateFor with the master role scalable up
// to maxMasters.
func TemplateForMasterMax(masters, maxMasters, workers int, deployment string) (tmpl, merge []byte, err error) {
	return templateForMax(masters, max(maxMasters, masters), workers, 0, deployment)
}

func templateFor(masters, workers, maxWorkers int, deployment string) (tmpl, merge []byte, err error) {
	return templateForMax(masters, masters, workers, maxWorkers, deployment)
}

func templateForMax(masters, maxMasters, workers, maxWorkers int, deployment string) (tmpl, merge []byte, err error) {
	spec := flow.DefaultSpec()
	spec.Master.Count = &masters
	if spec.Master.Max == nil || *spec.Master.Max < maxMasters {
		spec.Master.Max = &maxMasters
	}
	if spec.Master.Min != nil && *spec.Master.Min > masters {
		spec.Master.Min = &masters
	}
	return renderTemplate(spec, workers, maxWorkers, deployment)
}

// StartEtcd runs a single real etcd (the release kubeadm runs) on
// loopback for the simulation's membership; it allows as many learners as
// a master role has VMs, since simulated members never start.
func StartEtcd(dir string) (url string, stop func(), err error) {
	bins, err := loopback.FindBinaries()
	if err != nil {
		return "", nil, err
	}
	ports := make([]int, 2)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", nil, err
		}
		ports[i] = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
	}
	client := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	logf, err := os.Create(filepath.Join(dir, "etcd.log"))
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(bins.Etcd, "--name=sim", "--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+client, "--advertise-client-urls="+client,
		"--listen-peer-urls="+peer, "--initial-advertise-peer-urls="+peer, "--initial-cluster=sim="+peer,
		"--max-learners=16", "--unsafe-no-fsync", "--log-level=warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return "", nil, err
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); logf.Close() }
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(ports[0]), time.Second)
		if err == nil {
			c.Close()
			return client, stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("etcd did not listen on %s", client)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startServe runs `onekubed serve` on a master whose bootstrap
// succeeded, until the cluster closes or the VM is recreated.
func (c *Cluster) startServe(r *Run) {
	if c.o.ControlPlane == nil || r.VM.Role != "master" || r.Code != 0 {
		return
	}
	c.mu.Lock()
	if c.serves[r.VM.ID] != nil {
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	kc, err := os.ReadFile(c.o.ControlPlane.Kubeconfig)
	if err == nil {
		dst := env.Path(r.Root, ServeKubeconfig)
		if err = os.MkdirAll(filepath.Dir(dst), 0o755); err == nil {
			err = os.WriteFile(dst, kc, 0o600)
		}
	}
	s := &Run{VM: r.VM, Root: r.Root, done: make(chan struct{})}
	if err != nil {
		s.Err = err
		close(s.done)
		return
	}
	s.Args = []string{"serve", "--context", r.VM.ContextFile, "--root", r.Root, "--kubeconfig", ServeKubeconfig, "--log-format", "json"}
	cmd := exec.CommandContext(c.ctx, c.o.Bins.For(s.Args), s.Args...)
	cmd.Env = c.env(s)
	cmd.Stdout, cmd.Stderr = &s.output, &s.output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	s.Start = time.Now()
	if err := cmd.Start(); err != nil {
		s.Err = err
		close(s.done)
		return
	}
	s.pid = cmd.Process.Pid
	c.mu.Lock()
	c.serves[r.VM.ID] = s
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(s.done)
		err := cmd.Wait()
		s.End = time.Now()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			s.Code = ee.ExitCode()
		}
	}()
}

// StopServe kills a master's serve (the VM died), waiting for it to end.
func (c *Cluster) StopServe(vmid int) {
	c.mu.Lock()
	s := c.serves[vmid]
	delete(c.serves, vmid)
	c.mu.Unlock()
	if s == nil {
		return
	}
	_ = syscall.Kill(-s.pid, syscall.SIGKILL)
	<-s.done
}

// Serves returns the serve processes started so far, by VM ID.
func (c *Cluster) Serves() map[int]*Run {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[int]*Run{}
	for id, s := range c.serves {
		out[id] = s
	}
	return out
}

// EtcdMembers lists the members of the simulation's etcd as the agent
// published them (ONEGATE_K8S_ETCD of any master), for tests.
func (c *Cluster) EtcdMembers() string {
	for _, vm := range c.Sim.RoleVMs(c.ServiceID, "master") {
		if s := c.Sim.UserTemplate(vm.ID)["ONEGATE_K8S_ETCD"]; s != "" {
			return s
		}
	}
	return ""
}

// VMInfo is re-exported for option callbacks.
type VMInfo = onegatesim.VMInfo
