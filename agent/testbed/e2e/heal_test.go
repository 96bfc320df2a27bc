//go:build realbed

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/kubeadm"
	vmcontext "github.com/onekube/onekube/context"
)

// TestBedIdentityAndVMActions, on one cluster (1 master, 1 worker), the
// foundations remediation and autoscaling stand on:
//   - identity (issue 22): every VM is named after its node in OpenNebula
//     (it renamed itself through OneGate) and every Node's spec.providerID
//     is one://<VM ID>;
//   - OpenNebula's actions reach the bed VM: poweroff cuts it (OneFlow's
//     service goes WARNING, where scaling is refused), resume boots it
//     again and its Node comes back Ready (the service RUNNING again),
//     terminate destroys it and OneFlow drops it from its role.
func TestBedIdentityAndVMActions(t *testing.T) {
	b := newBed(t)
	s := startService(t, b, 1)
	runs := waitAgents(t, s, 2)
	for _, r := range runs {
		if r.Code != 0 || r.Err != nil {
			t.Fatalf("VM %d (%s): bootstrap exited %d (%v):\n%s", r.VM.ID, r.VM.Role, r.Code, r.Err, lastLines(r.Output(), 15))
		}
	}
	master, worker := s.Sim.RoleVMs(s.ID, "master")[0], s.Sim.RoleVMs(s.ID, "worker")[0]
	cfg, err := b.RESTConfig(s.VM(master.ID), "/etc/kubernetes/admin.conf")
	if err != nil {
		t.Fatal(err)
	}
	admin := kubernetes.NewForConfigOrDie(cfg)
	nodes := map[string]string{}
	for _, vm := range []int{master.ID, worker.ID} {
		info, _ := s.Sim.VM(vm)
		name := s.Sim.UserTemplate(vm)[vmcontext.KeyPubNodeName]
		nodes[name] = info.IP.String()
		if info.Name != name {
			t.Errorf("VM %d is named %q in OpenNebula, its node %q", vm, info.Name, name)
		}
	}
	waitReady(t, admin, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	list, err := admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range list.Items {
		id, ok, err := kubeadm.ParseProviderID(n.Spec.ProviderID)
		if !ok || err != nil || (id != master.ID && id != worker.ID) || nodes[n.Name] == "" {
			t.Errorf("node %s: providerID %q", n.Name, n.Spec.ProviderID)
		}
	}

	start := time.Now()
	if err := s.Sim.Act(worker.ID, "poweroff", true); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "the worker's VM to lose power", func() bool { return s.VM(worker.ID).Pid() == 0 })
	if st := s.Sim.ServiceState(s.ID); st != "WARNING" {
		t.Errorf("service %s with a VM in POWEROFF, want WARNING", st)
	}
	if err := s.Sim.Scale(s.ID, "worker", 2); err == nil || !strings.Contains(err.Error(), "WARNING") {
		t.Errorf("scale in WARNING: %v", err)
	}
	if err := s.Sim.Act(worker.ID, "resume", false); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 60*time.Second, "the worker's VM to boot", func() bool { return s.VM(worker.ID).Pid() != 0 })
	if n := s.VM(worker.ID).Boots(); n != 2 {
		t.Errorf("the worker's VM booted %d times, want 2", n)
	}
	waitReady(t, admin, nodes)
	t.Logf("poweroff → resume → Node Ready: %s", time.Since(start).Round(time.Second))
	if st := s.Sim.ServiceState(s.ID); st != "RUNNING" {
		t.Errorf("service %s after the resume, want RUNNING", st)
	}

	if err := s.Sim.Act(worker.ID, "terminate", true); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "the worker's VM to be destroyed", func() bool { return s.VM(worker.ID).Pid() == 0 })
	if vms := s.Sim.RoleVMs(s.ID, "worker"); len(vms) != 0 || s.Sim.VMState(worker.ID) != "" {
		t.Errorf("after terminate: workers %v, VM state %q", vms, s.Sim.VMState(worker.ID))
	}
}
