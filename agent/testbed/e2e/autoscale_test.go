//go:build realbed

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/onekube/onekube/agent/testbed"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegatesim"
)

// autoscaleServeArgs shorten the autoscale loop (production: 30 s tick,
// 10 min unneeded) and the cleanup that deletes a removed worker's Node
// (production: 5 min after its VM is gone, 1 min tick).
var autoscaleServeArgs = []string{"--autoscale-every=3s", "--autoscale-unneeded-time=20s", "--cleanup-grace=10s", "--cleanup-every=3s"}

// TestAutoscale is issue 22's autoscaling on one cluster that starts with
// no worker (1 master, ONEAPP_K8S_AUTOSCALE=0:3 in the CONTEXT, the master
// tainted), OneFlow played by the simulator (COOLDOWN, cardinality through
// OneGate, DONE lowers it):
//   - (1) scale from zero: a Deployment of one 1500m pod, which the
//     tainted master cannot take: with no worker Node to copy, the acting
//     master judges it on the worker role's VM size from its CONTEXT
//     (ONEKUBE_WORKER_TEMPLATE, given here as the bed's fakenode Nodes
//     are: 2 CPU, 4Gi; a bound pod is reported Running, its containers
//     never run) and raises the worker role 0 -> 1 through OneGate; the
//     new VM joins and the pod runs there;
//   - (1b) root on that worker writes autoscale bounds (min 2) on the
//     master and on itself, ROLE_NAME forged too: nothing is scaled;
//   - (2) a second pod the first worker cannot hold: now the template is
//     that worker's Node, and the role goes 1 -> 2;
//   - (3) the Deployment scaled to zero: after the unneeded time the
//     newest worker, not the oldest VM, is drained and that exact VM is
//     terminated; OneFlow drops it at DONE and lowers the cardinality.
func TestAutoscale(t *testing.T) {
	t.Parallel() // mostly waiting: paired with another bed test (make e2e-real, docs/testbed.md)
	b := newBed(t)
	s := startServiceWith(t, b, testbed.ServiceOptions{Workers: 0, CNIManifest: flannelManifest, AgentArgs: agentArgs,
		ServeArgs: autoscaleServeArgs, Cooldown: 5 * time.Second,
		Context: map[string]string{vmcontext.KeyAutoscale: "0:3", vmcontext.KeyTaintedMaster: "YES",
			vmcontext.KeyWorkerTemplate: "vcpu=2 memory=4096"}})
	for _, r := range waitAgents(t, s, 1) {
		if r.Code != 0 || r.Err != nil {
			t.Fatalf("VM %d (%s): bootstrap exited %d (%v):\n%s", r.VM.ID, r.VM.Role, r.Code, r.Err, lastLines(r.Output(), 15))
		}
	}
	master := s.Sim.RoleVMs(s.ID, "master")[0].ID
	cfg, err := b.RESTConfig(s.VM(master), "/etc/kubernetes/admin.conf")
	if err != nil {
		t.Fatal(err)
	}
	admin := kubernetes.NewForConfigOrDie(cfg)
	if got := roleIDs(s, "worker"); len(got) != 0 {
		t.Fatalf("workers %v at the start, want none", got)
	}
	waitUntil(t, 3*time.Minute, "the master's Node Ready", func() bool { return len(readyVMs(admin)) == 1 })
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve on the master:\n%s", lastLines(s.Daemon(master, "serve"), 80))
		}
		logFlowEvents(t, s)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()

	// (1) From zero: one pod of 1500m, the master tainted.
	dep := bigDeployment("autoscale-big", 1, "1500m")
	if _, err := admin.AppsV1().Deployments(corev1.NamespaceDefault).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first := scaleUpStep(t, s, admin, dep.Name, 1, nil, "0 -> 1 (from zero, the VM size)")

	// (1b) A sibling's forgeries: root on the worker writes bounds whose
	// min (2) would raise the role if the loop obeyed them, on the master
	// (sibling writes are on by default) and on itself, with its ROLE_NAME
	// forged past OneGate's check. The loop reads its bounds from its own
	// CONTEXT only: nothing is scaled.
	att, err := s.Attacker(first)
	if err != nil {
		t.Fatal(err)
	}
	seen, forgedAt := len(s.Sim.Events()), time.Now()
	if err := att.Put(ctx, master, vmcontext.KeyAutoscale+"=2:3\n"+vmcontext.KeyWorkerTemplate+"=vcpu=1 memory=512", 1); err != nil {
		t.Logf("sibling write refused (fine): %v", err)
	}
	if err := att.Publish(ctx, vmcontext.KeyAutoscale+"=2:3", onegatesim.BypassSpelling(vmcontext.KeyRoleName, "master")); err != nil {
		t.Fatal(err)
	}
	// Two whole ticks of the loop after the forgeries, as serve reports them.
	waitServeTicks(t, s.VM(master), forgedAt, 2, "autoscale")
	for _, e := range s.Sim.Events()[seen:] {
		if e.Kind == onegatesim.EventScale || e.Kind == onegatesim.EventVMAction && !strings.Contains(e.Detail, "rename") {
			t.Errorf("a sibling's keys moved the autoscaler: %s", e)
		}
	}
	if got := roleIDs(s, "worker"); !slices.Equal(got, []int{first}) {
		t.Errorf("workers %v after the forgeries, want %v", got, []int{first})
	}

	// (2) A second pod: the first worker (2 CPU, flannel on it) holds
	// one at most; the template is now its Node.
	if _, err := admin.AppsV1().Deployments(corev1.NamespaceDefault).Patch(ctx, dep.Name, types.MergePatchType,
		[]byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	added := scaleUpStep(t, s, admin, dep.Name, 2, []int{first}, "1 -> 2 (a worker Node's copy)")
	addedNode := nodeOf(t, admin, added)
	onAdded := false
	for _, p := range depPods(admin, dep.Name) {
		onAdded = onAdded || p.Spec.NodeName == addedNode
	}
	if !onAdded {
		t.Errorf("no pod of the Deployment on the new worker %s", addedNode)
	}

	// (3) Scaled to zero: both workers idle; the oldest stays.
	if _, err := admin.AppsV1().Deployments(corev1.NamespaceDefault).Patch(ctx, dep.Name, types.MergePatchType,
		[]byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	idleAt := time.Now()
	waitUntil(t, 3*time.Minute, fmt.Sprintf("VM %d terminated and dropped by OneFlow", added), func() bool {
		_, ok := s.Sim.VM(added)
		return !ok
	})
	t.Logf("measured: Deployment scaled to 0 → VM %d gone %s (unneeded time 20s)", added, time.Since(idleAt).Round(time.Second))
	terminated := false
	for _, e := range s.Sim.Events() {
		if e.Kind == onegatesim.EventVMAction && e.VMID == added && strings.Contains(e.Detail, "terminate") {
			terminated = true
		}
	}
	if !terminated {
		t.Errorf("VM %d left without a terminate action", added)
	}
	if got := roleIDs(s, "worker"); !slices.Equal(got, []int{first}) {
		t.Errorf("workers %v after the scale-down, want the oldest %v", got, first)
	}
	untouched(t, s, []int{first}, "after the scale-down")
	waitUntil(t, time.Minute, "the drained Node deleted", func() bool {
		_, err := admin.CoreV1().Nodes().Get(ctx, addedNode, metav1.GetOptions{})
		return err != nil
	})
	out := flowStatus(t, b, s)
	if !strings.Contains(out, "autoscale: workers 1 (bounds 0:3)") || !strings.Contains(out, fmt.Sprintf("VM %d) drained and terminated", added)) ||
		!strings.Contains(out, "autoscale last up: ") {
		t.Errorf("onekube-flow status lacks the autoscaler's lines:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "autoscale") {
			t.Logf("onekube-flow status: %s", l)
		}
	}
}

// scaleUpStep waits, with want pods of the Deployment asked for, for one
// pod Unschedulable, the worker role raised to want workers through
// OneGate, a new worker VM (not in before) with a Ready Node, and every
// pod Running; it returns the new VM and logs the times.
func scaleUpStep(t *testing.T, s *testbed.Service, admin kubernetes.Interface, app string, want int, before []int, what string) int {
	t.Helper()
	var pendingAt time.Time
	waitUntil(t, time.Minute, "a pod pending as Unschedulable", func() bool {
		for _, p := range depPods(admin, app) {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
					pendingAt = c.LastTransitionTime.Time
					return true
				}
			}
		}
		return false
	})
	var scaledAt time.Time
	waitUntil(t, time.Minute, fmt.Sprintf("the worker role's cardinality raised to %d through OneGate", want), func() bool {
		for _, e := range s.Sim.Events() {
			if e.Kind == onegatesim.EventScale && e.Role == "worker" && e.VMID < 0 {
				scaledAt = e.Time // the latest
			}
		}
		return !scaledAt.IsZero() && len(roleIDs(s, "worker")) >= want
	})
	var added int
	waitUntil(t, 3*time.Minute, "a new worker VM with a Ready Node", func() bool {
		for _, id := range roleIDs(s, "worker") {
			if !slices.Contains(before, id) && readyVMs(admin)[id] {
				added = id
				return true
			}
		}
		return false
	})
	joinedAt := time.Now()
	waitUntil(t, 2*time.Minute, "every pod of the Deployment Running", func() bool {
		ps := depPods(admin, app)
		for _, p := range ps {
			if p.Status.Phase != corev1.PodRunning {
				return false
			}
		}
		return len(ps) == want
	})
	runningAt := time.Now()
	t.Logf("measured %s: Unschedulable → cardinality raised %s; → VM %d Node Ready %s; → every pod Running %s", what,
		scaledAt.Sub(pendingAt).Round(time.Second), added, joinedAt.Sub(pendingAt).Round(time.Second), runningAt.Sub(pendingAt).Round(time.Second))
	if got := roleIDs(s, "worker"); len(got) != want {
		t.Errorf("workers %v after scaling %s, want %d (one new worker fits the pod)", got, what, want)
	}
	return added
}

// bigDeployment: replicas pods each requesting cpu.
func bigDeployment(name string, replicas int32, cpu string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: corev1.NamespaceDefault},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("64Mi")}}}},
				},
			},
		},
	}
}

func depPods(c kubernetes.Interface, app string) []corev1.Pod {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := c.CoreV1().Pods(corev1.NamespaceDefault).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return nil
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}
