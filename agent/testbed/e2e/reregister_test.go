//go:build realbed

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/testbed"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegatesim"
)

// kubeletConf is a node's own credential inside its VM.
const kubeletConf = "/etc/kubernetes/kubelet.conf"

// reregisterAsAnotherVM is TestRemediation's step (f): root on a worker,
// with its own kubelet credential only, deletes its Node (the
// onekube:node-self-removal grant, for `leave`) and registers it again
// under its own name with spec.providerID one://<victim>, which
// NodeRestriction's admitNode does not check on create (k8s.io/kubernetes
// plugin/pkg/admission/noderestriction/admission.go). Its Node then
// reports NotReady and no heartbeat after: remediation must act neither on
// the victim's VM (which the Node names) nor on the attacker's (serve
// nodeVM: a provider ID binds only when the name's VM ID agrees). The
// attacker's worker is restored after, Ready under its true provider ID.
//
// The victim is a worker, not the master: this cluster's only master is
// the acting one, which never remediates itself. The attacker picks a
// victim whose Node sorts before its own: the Node list comes sorted by
// name, and before the fix the later Node of a provider ID won.
func reregisterAsAnotherVM(t *testing.T, ctx context.Context, s *testbed.Service, admin kubernetes.Interface, master int, unhealthyAfter time.Duration) {
	t.Helper()
	start := time.Now()
	names := map[string]int{}
	for _, id := range roleIDs(s, "worker") {
		names[nodeOf(t, admin, id)] = id
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	victimNode, attNode := sorted[0], sorted[len(sorted)-1]
	victim, attID := names[victimNode], names[attNode]
	att, err := s.Attacker(attID)
	if err != nil {
		t.Fatal(err)
	}
	kubectl := func(args ...string) (string, error) {
		return att.Run(ctx, "kubectl", append([]string{"--kubeconfig", kubeletConf}, args...)...)
	}

	// Its kubelet stops, so that it does not put its true Node back.
	if out, err := att.Run(ctx, "systemctl", "stop", "kubelet"); err != nil {
		t.Fatalf("VM %d: systemctl stop kubelet: %v\n%s", attID, err, out)
	}
	if out, err := kubectl("delete", "node", attNode); err != nil {
		t.Fatalf("VM %d's kubelet may not delete its own Node %s: %v\n%s", attID, attNode, err, out)
	}
	// As a kubelet registers, the Node comes with its status: NotReady,
	// and no heartbeat after (a node may create its Node with a status,
	// but not read nodes/status to patch it).
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	forged := corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: attNode, Labels: map[string]string{
			"kubernetes.io/hostname": attNode, "kubernetes.io/os": runtime.GOOS, "kubernetes.io/arch": runtime.GOARCH,
			kubeadm.LabelVMID: fmt.Sprint(attID),
		}},
		Spec: corev1.NodeSpec{ProviderID: kubeadm.ProviderID(victim)},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse,
			Reason: "KubeletNotReady", Message: "forged", LastHeartbeatTime: now, LastTransitionTime: now}}},
	}
	body, err := json.Marshal(forged)
	if err != nil {
		t.Fatal(err)
	}
	out, err := att.Run(ctx, "sh", "-c", `printf '%s' "$1" | kubectl --kubeconfig `+kubeletConf+` create -f -`, "sh", string(body))
	if err != nil {
		t.Fatalf("the premise fails: the API server refused VM %d's kubelet a Node %s with provider ID %s: %v\n%s",
			attID, attNode, forged.Spec.ProviderID, err, out)
	}
	n, err := admin.CoreV1().Nodes().Get(ctx, attNode, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the forged Node %s is not as its kubelet created it: %v", attNode, err)
	}
	if n.Spec.ProviderID != kubeadm.ProviderID(victim) || len(n.Status.Conditions) != 1 || ready(n) {
		t.Fatalf("the forged Node %s is not as its kubelet created it: provider ID %q, conditions %+v", attNode, n.Spec.ProviderID, n.Status.Conditions)
	}
	t.Logf("the API server accepted VM %d's kubelet re-registering its Node %s with provider ID %s (VM %d's)", attID, attNode, n.Spec.ProviderID, victim)

	// Past the timeout, with a margin of several ticks, nothing may act.
	forgedAt := time.Now()
	var named []string
	for time.Since(forgedAt) < unhealthyAfter+15*time.Second {
		line := s.Sim.UserTemplate(master)[vmcontext.KeyPubRemediation]
		for _, id := range []int{victim, attID} {
			if strings.Contains(line+" ", fmt.Sprintf("VM %d ", id)) && !slices.Contains(named, line) {
				named = append(named, line)
			}
		}
		if actedOn(s, victim, attID) {
			break // the failure is reported below, at once
		}
		time.Sleep(time.Second)
	}
	watched := time.Since(forgedAt)
	for _, l := range named {
		t.Errorf("%s names VM %d or %d for the forged Node: %s", vmcontext.KeyPubRemediation, victim, attID, l)
	}
	untouched(t, s, []int{victim, attID}, "after a Node re-registered with another VM's provider ID")
	for _, node := range []string{victimNode, attNode} {
		if ev := remediationEvents(t, admin, node); len(ev) > 0 {
			t.Errorf("remediation Events on %s: %q", node, ev)
		}
	}
	if t.Failed() {
		t.FailNow() // the rest of TestRemediation needs its workers
	}

	// Restored: the forged Node goes, the kubelet registers the true one.
	if out, err := kubectl("delete", "node", attNode); err != nil {
		t.Fatalf("deleting the forged Node: %v\n%s", err, out)
	}
	if out, err := att.Run(ctx, "systemctl", "start", "kubelet"); err != nil {
		t.Fatalf("VM %d: systemctl start kubelet: %v\n%s", attID, err, out)
	}
	waitUntil(t, time.Minute, fmt.Sprintf("VM %d's Node Ready again", attID), func() bool {
		n, err := admin.CoreV1().Nodes().Get(ctx, attNode, metav1.GetOptions{})
		return err == nil && n.Spec.ProviderID == kubeadm.ProviderID(attID) && ready(n)
	})
	t.Logf("measured: VM %d's Node re-registered with VM %d's provider ID, NotReady: nothing done in %s (timeout %s); whole step %s",
		attID, victim, watched.Round(time.Second), unhealthyAfter, time.Since(start).Round(time.Second))
}

// actedOn: a power or terminate action reached one of the VMs.
func actedOn(s *testbed.Service, ids ...int) bool {
	for _, e := range s.Sim.Events() {
		for _, id := range ids {
			if e.VMID == id && e.Kind == onegatesim.EventVMAction && !strings.Contains(e.Detail, "rename") {
				return true
			}
		}
	}
	return false
}
