//go:build realbed

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/etcdm"
	"github.com/onekube/onekube/agent/testbed"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegatesim"
)

// TestRemediationMaster is issue 22's "a master is lost: it is replaced
// only while quorum holds, and the new master joins", on one cluster of
// 3 masters and no worker, with the flags of TestRemediation:
//   - (a) two non-acting masters' hosts stop answering oned (UNKNOWN), their
//     guests still running (etcd keeps quorum): remediation stops and says
//     so in ONEGATE_K8S_REMEDIATION and `onekube-flow status`; no master is
//     acted on, no etcd member removed. The hosts answer again;
//   - (b) a non-acting master is lost for good: its guest dies and oned
//     leaves it in BOOT_FAILURE (no resume leads out). Remediation removes
//     its etcd member and its Node before the terminate (both checked the
//     moment the guest's power is cut), terminates it through OneGate,
//     and, once the owner has restarted oneflow-server (OneFlow keeps the
//     service in WARNING after a failed VM goes DONE, and remediation says
//     so), restores the master role to 3: a new master VM boots, gets the
//     HA grant and joins; 3 healthy etcd members, 3 Ready control-plane
//     Nodes, the lost one's name gone.
func TestRemediationMaster(t *testing.T) {
	t.Parallel() // mostly waiting: paired with another bed test (make e2e-real, docs/testbed.md)
	b := newBed(t)
	s := startServiceWith(t, b, testbed.ServiceOptions{Masters: 3, CNIManifest: flannelManifest, AgentArgs: agentArgs,
		ServeArgs: remediateServeArgs, Sim: onegatesim.Options{Cooldown: 10 * time.Second}})
	for _, r := range waitAgents(t, s, 3) {
		if r.Code != 0 || r.Err != nil {
			t.Fatalf("VM %d (%s): bootstrap exited %d (%v):\n%s", r.VM.ID, r.VM.Role, r.Code, r.Err, lastLines(r.Output(), 15))
		}
	}
	masters := sortedMasters(s)
	ids := roleIDs(s, "master")
	cfg, err := b.RESTConfig(s.VM(ids[0]), "/etc/kubernetes/admin.conf")
	if err != nil {
		t.Fatal(err)
	}
	admin := kubernetes.NewForConfigOrDie(cfg)
	waitUntil(t, 3*time.Minute, "3 control-plane Nodes Ready", func() bool { return len(readyVMs(admin)) == 3 })
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	acting := actingMaster(t, ctx, admin)
	t.Logf("VM %d is the acting master", acting)
	t.Cleanup(func() {
		if t.Failed() {
			for _, id := range roleIDs(s, "master") {
				t.Logf("serve on VM %d:\n%s", id, lastLines(s.Daemon(id, "serve"), 60))
			}
			logFlowEvents(t, s)
		}
	})
	var others []int
	for _, id := range ids {
		if id != acting {
			others = append(others, id)
		}
	}
	// The acting master's etcd client certificate, every master dialled.
	var actingFirst []onegatesim.VMInfo
	for _, m := range masters {
		if m.ID == acting {
			actingFirst = append([]onegatesim.VMInfo{m}, actingFirst...)
		} else {
			actingFirst = append(actingFirst, m)
		}
	}
	ec := etcdClient(t, b, s, actingFirst)
	before, err := ec.Members(ctx)
	if err != nil || len(before) != 3 {
		t.Fatalf("etcd members before: %v, %v", etcdm.Summary(before), err)
	}

	// (a) Two masters' hosts stop answering: the short-circuit.
	seq := len(s.Sim.Events())
	for _, id := range others {
		if err := s.Sim.SetLCMState(id, "UNKNOWN"); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	var line string
	waitUntil(t, time.Minute, "remediation to stop and say so", func() bool {
		line = s.Sim.UserTemplate(acting)[vmcontext.KeyPubRemediation]
		return strings.Contains(line, "2 of 3 masters")
	})
	t.Logf("measured: two masters UNKNOWN → short-circuit reported %s: %s", time.Since(start).Round(time.Second), line)
	time.Sleep(10 * time.Second) // several ticks past it
	// status judges etcd from the published members and the master VMs'
	// states (flow/status/quorum.go): two masters UNKNOWN leave quorum in
	// doubt, not lost, as their guests may still run (here they do).
	code, out, errs := onSwitch(t, b, flowEnv(t, b, s), onekubeFlow(t), "status", fmt.Sprint(s.ID))
	if !strings.Contains(out, "remediation: 2 of 3 masters") {
		t.Errorf("onekube-flow status (exit %d) does not report the short-circuit:\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "ETCD QUORUM IN DOUBT") || strings.Contains(out, "ETCD HAS LOST QUORUM") {
		t.Errorf("onekube-flow status (exit %d) should call quorum in doubt, not lost:\n%s%s", code, out, errs)
	}
	for _, e := range s.Sim.Events()[seq:] {
		if e.Kind == onegatesim.EventVMAction && !strings.Contains(e.Detail, "rename") {
			t.Errorf("remediation acted in a partition: %s", e)
		}
	}
	if ms, err := ec.Members(ctx); err != nil || len(ms) != 3 {
		t.Errorf("etcd members after the short-circuit: %s, %v; want 3", etcdm.Summary(ms), err)
	}
	for _, id := range others {
		if err := s.Sim.SetLCMState(id, "RUNNING"); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, 30*time.Second, "the service RUNNING and the report clear", func() bool {
		return s.Sim.ServiceState(s.ID) == "RUNNING" && !strings.Contains(s.Sim.UserTemplate(acting)[vmcontext.KeyPubRemediation], "masters")
	})

	// (b) A master lost for good. Who acts may have changed hands.
	if now := actingMaster(t, ctx, admin); now != acting {
		t.Logf("VM %d acts now", now)
		acting = now
	}
	var victim int
	for _, id := range ids {
		if id != acting {
			victim = id
			break
		}
	}
	// Talk to the acting master's API server from now on: the first
	// master may be the one lost.
	if cfg, err = b.RESTConfig(s.VM(acting), "/etc/kubernetes/admin.conf"); err != nil {
		t.Fatal(err)
	}
	admin = kubernetes.NewForConfigOrDie(cfg)
	victimNode := nodeOf(t, admin, victim)
	var survivors []onegatesim.VMInfo
	for _, m := range actingFirst {
		if m.ID != victim {
			survivors = append(survivors, m)
		}
	}
	sc := etcdClient(t, b, s, survivors)
	// The moment the terminate cuts the guest's power, its etcd member
	// and its Node must be gone already.
	var (
		mu      sync.Mutex
		atCut   string
		cutSeen bool
	)
	s.Sim.OnVMPower(func(vm onegatesim.VMInfo, p onegatesim.Power) {
		if vm.ID != victim || p != onegatesim.PowerCut {
			return
		}
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var what []string
		ms, err := sc.Members(c)
		if err != nil {
			what = append(what, "etcd members unreadable: "+err.Error())
		}
		for _, m := range ms {
			if m.Name == victimNode {
				what = append(what, "its etcd member still there")
			}
		}
		if _, err := admin.CoreV1().Nodes().Get(c, victimNode, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			what = append(what, fmt.Sprintf("its Node still there (%v)", err))
		}
		mu.Lock()
		defer mu.Unlock()
		atCut, cutSeen = strings.Join(what, "; "), true
	})
	if err := s.VM(victim).PowerOff(); err != nil {
		t.Fatal(err)
	}
	if err := s.Sim.SetLCMState(victim, "BOOT_FAILURE"); err != nil {
		t.Fatal(err)
	}
	failed := time.Now()
	waitUntil(t, time.Minute, "the lost master's VM to be terminated", func() bool { _, ok := s.Sim.VM(victim); return !ok })
	terminated := time.Since(failed)
	waitUntil(t, 10*time.Second, "the power cut to be checked", func() bool { mu.Lock(); defer mu.Unlock(); return cutSeen })
	mu.Lock()
	if atCut != "" {
		t.Errorf("when VM %d was terminated: %s", victim, atCut)
	}
	mu.Unlock()
	if ev := remediationEvents(t, admin, victimNode); len(ev) == 0 || !strings.Contains(strings.Join(ev, "\n"), "etcd member removed; Node deleted; terminate sent") {
		t.Errorf("remediation Events on %s: %q, want the replace with the etcd member removed first", victimNode, ev)
	}
	waitUntil(t, 30*time.Second, "the status to name the owner's way out of WARNING", func() bool {
		return strings.Contains(s.Sim.UserTemplate(acting)[vmcontext.KeyPubRemediation], "power-cycles one VM of role master")
	})
	if n := len(roleIDs(s, "master")); n != 2 || s.Sim.ServiceState(s.ID) != "WARNING" {
		t.Errorf("%d masters, service %s after the terminate; want 2, WARNING (no scale asked)", n, s.Sim.ServiceState(s.ID))
	}
	// The owner restarts oneflow-server, as the status says.
	s.Sim.RestartFlow()
	var repl int
	waitUntil(t, 4*time.Minute, "a new master VM with a Ready Node", func() bool {
		for _, id := range roleIDs(s, "master") {
			if !slices.Contains(ids, id) && readyVMs(admin)[id] {
				repl = id
				return true
			}
		}
		return false
	})
	t.Logf("measured: master VM %d lost (guest dead, BOOT_FAILURE) → its etcd member and Node removed and the VM terminated %s; → new master VM %d Ready %s (the owner's oneflow-server restart at %s)",
		victim, terminated.Round(time.Second), repl, time.Since(failed).Round(time.Second), terminated.Round(time.Second))
	if n := len(roleIDs(s, "master")); n != 3 {
		t.Errorf("master cardinality %d after the replacement, want 3", n)
	}
	// Its bootstrap joined it as a control plane: the HA grant reached it.
	for _, r := range waitAgents(t, s, 4) {
		if r.VM.ID == repl && (r.Code != 0 || r.Err != nil) {
			t.Errorf("new master VM %d: bootstrap exited %d (%v):\n%s", repl, r.Code, r.Err, lastLines(r.Output(), 15))
		}
	}
	var ms []etcdm.Member
	now3 := append(survivors, onegatesim.VMInfo{})
	now3[len(now3)-1], _ = s.Sim.VM(repl)
	nc := etcdClient(t, b, s, now3)
	waitUntil(t, time.Minute, "3 healthy etcd members, the lost one's gone", func() bool {
		var err error
		ms, err = nc.Members(ctx)
		if err != nil || len(ms) != 3 {
			return false
		}
		for _, m := range ms {
			if !m.Healthy || m.Learner || m.Name == victimNode {
				return false
			}
		}
		return true
	})
	t.Logf("etcd: %s", etcdm.Summary(ms))
	r := readyVMs(admin)
	for _, id := range roleIDs(s, "master") {
		if !r[id] {
			t.Errorf("master VM %d has no Ready Node", id)
		}
	}
	list, err := admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range list.Items {
		if n.Name == victimNode {
			t.Errorf("the lost master's Node %s is back", victimNode)
		}
		if _, cp := n.Labels["node-role.kubernetes.io/control-plane"]; !cp {
			t.Errorf("Node %s is no control plane", n.Name)
		}
	}
	if len(list.Items) != 3 {
		t.Errorf("%d Nodes, want 3", len(list.Items))
	}
}

// actingMaster is the VM whose serve holds the Lease (its identity ends
// in -<VMID>).
func actingMaster(t *testing.T, ctx context.Context, c kubernetes.Interface) int {
	t.Helper()
	var id int
	waitUntil(t, time.Minute, "a serve Lease holder", func() bool {
		l, err := c.CoordinationV1().Leases("kube-system").Get(ctx, "onekube-serve", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return false
		}
		h := *l.Spec.HolderIdentity
		id, err = strconv.Atoi(h[strings.LastIndex(h, "-")+1:])
		return err == nil
	})
	return id
}
