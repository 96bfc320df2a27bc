//go:build realbed

package e2e

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/etcdm"
	"github.com/onekube/onekube/agent/testbed"
	"github.com/onekube/onekube/context/onegatesim"
)

// TestBedTerminatedMasterRemovesItsEtcdMember: of three masters, the
// third is terminated through OneFlow's soft path (LCM_STATE SHUTDOWN, the
// ACPI event): onekube-node.service's `onekubed leave` removes its own etcd
// member before the VM goes (quorum holds: two healthy voters of two are
// left), as kubeadm reset does, and OneFlow drops the VM.
func TestBedTerminatedMasterRemovesItsEtcdMember(t *testing.T) {
	b := newBed(t)
	s := startServiceWith(t, b, testbed.ServiceOptions{Masters: 3, CNIManifest: flannelManifest, AgentArgs: agentArgs,
		Sim: onegatesim.Options{ShutdownTimeout: 3 * time.Minute}})
	runs := waitAgents(t, s, 3)
	for _, r := range runs {
		if r.Code != 0 || r.Err != nil {
			t.Fatalf("VM %d (%s): exit %d (%v):\n%s", r.VM.ID, r.VM.Role, r.Code, r.Err, lastLines(r.Output(), 20))
		}
	}
	masters := s.Sim.RoleVMs(s.ID, "master")
	sort.Slice(masters, func(i, j int) bool { return masters[i].ID < masters[j].ID })
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if got, err := etcdClient(t, b, s, masters[:1]).Members(ctx); err != nil || etcdm.Summary(got) != expectSummary(masters, "voter") {
		t.Fatalf("etcd before: %q, %v", etcdm.Summary(got), err)
	}
	start := time.Now()
	if err := s.Sim.Act(masters[2].ID, "terminate", false); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 3*time.Minute, "the third master's VM to be DONE", func() bool { return s.Sim.VMState(masters[2].ID) == "" })
	t.Logf("soft terminate of a master → DONE: %s", time.Since(start).Round(100*time.Millisecond))
	leaves := s.Leaves(masters[2].ID)
	if len(leaves) != 1 || !strings.Contains(leaves[0], "etcd member removed true") {
		t.Errorf("the master's leave:\n%s", strings.Join(leaves, "\n---\n"))
	}
	got, err := etcdClient(t, b, s, masters[:1]).Members(ctx)
	if err != nil || etcdm.Summary(got) != expectSummary(masters[:2], "voter") {
		t.Errorf("etcd after: %q, %v", etcdm.Summary(got), err)
	}
	if vms := s.Sim.RoleVMs(s.ID, "master"); len(vms) != 2 || s.Sim.ServiceState(s.ID) != "RUNNING" {
		t.Errorf("masters %v, service %s", vms, s.Sim.ServiceState(s.ID))
	}
}
