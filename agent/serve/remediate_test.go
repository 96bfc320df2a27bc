package serve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/system/systemtest"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// remBed is a service, its Nodes and a remediation loop over fakes.
type remBed struct {
	t       *testing.T
	og      *fakeFlow
	cs      *fake.Clientset
	clock   *systemtest.Clock
	members *fakeMembers
	loop    *Remediate
}

// newRemBed: master VM 10 (acting) and any more masters, workers 11..;
// every VM has a Ready Node named <role>-<id> with its provider ID.
func newRemBed(t *testing.T, masters, workers []int) *remBed {
	b := &remBed{t: t, og: newFakeFlow(10), cs: fake.NewClientset(), clock: systemtest.NewClock(t0), members: &fakeMembers{}}
	for _, id := range append([]int{10}, masters...) {
		b.og.add("master", id)
		b.node(fmt.Sprintf("master-%d", id), id, true)
	}
	for _, id := range workers {
		b.og.add("worker", id)
		b.node(fmt.Sprintf("worker-%d", id), id, false)
	}
	// Discovery lists pods without the eviction subresource, so the drain
	// deletes (the fake clientset's evictions delete nothing).
	b.cs.Resources = []*metav1.APIResourceList{{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods", Kind: "Pod", Namespaced: true}}}}
	b.loop = &Remediate{OneGate: b.og, Actor: b.og, Client: b.cs, Members: b.members, Clock: b.clock, Self: 10, MasterRole: "master"}
	return b
}

func (b *remBed) node(name string, id int, master bool) {
	b.t.Helper()
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{kubeadm.LabelVMID: fmt.Sprint(id)},
			CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour))},
		Spec:   corev1.NodeSpec{ProviderID: kubeadm.ProviderID(id)},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))}}},
	}
	if master {
		n.Labels[labelControlPlane] = ""
	}
	if _, err := b.cs.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		b.t.Fatal(err)
	}
}

// sick sets a Node's Ready to status since ago.
func (b *remBed) sick(name string, status corev1.ConditionStatus, ago time.Duration) {
	b.t.Helper()
	ctx := context.Background()
	n, err := b.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		b.t.Fatal(err)
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, LastTransitionTime: metav1.NewTime(b.clock.Now().Add(-ago))}}
	if _, err := b.cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		b.t.Fatal(err)
	}
}

func (b *remBed) tick() RemediateReport {
	b.t.Helper()
	if _, err := b.loop.Tick(context.Background()); err != nil {
		b.t.Fatal(err)
	}
	return b.loop.Report().(RemediateReport)
}

func (b *remBed) nodeExists(name string) bool {
	_, err := b.cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	return err == nil
}

// events lists the remediation Events recorded on a Node.
func (b *remBed) events(node string) []string {
	b.t.Helper()
	list, err := b.cs.CoreV1().Events(metav1.NamespaceDefault).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		b.t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "Node" && e.InvolvedObject.Name == node && e.Reason == EventReason {
			out = append(out, e.Message)
		}
	}
	return out
}

func (b *remBed) wantActions(want ...string) {
	b.t.Helper()
	got, _ := b.og.log()
	if !slices.Equal(got, want) {
		b.t.Fatalf("OneGate actions %q, want %q", got, want)
	}
}

func (b *remBed) published() string {
	vm, _ := b.og.GetVM(context.Background())
	return vm.UserTemplate[vmcontext.KeyPubRemediation]
}

func addPod(t *testing.T, cs kubernetes.Interface, name, node string) {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs-uid", Controller: new(true)}}},
		Spec: corev1.PodSpec{NodeName: node}}
	if _, err := cs.CoreV1().Pods("default").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A worker whose kubelet is gone climbs the whole ladder: poweroff, resume,
// a wait for recovery, then drain, Node deleted, terminate (OneFlow drops
// it and lowers the cardinality), and the cardinality restored, only once
// the service is RUNNING: COOLDOWN is waited out without a request, and a
// refusal is retried only after ScaleRetry. Each step is an Event on the
// Node, an action in the status and a line in ONEGATE_K8S_REMEDIATION.
func TestRemediateReplacesABrokenWorker(t *testing.T) {
	b := newRemBed(t, nil, []int{11, 12, 13})
	addPod(t, b.cs, "web-12", "worker-12")
	b.sick("worker-12", corev1.ConditionUnknown, 4*time.Minute)
	if rep := b.tick(); len(rep.Unhealthy) != 0 {
		t.Fatalf("Ready=Unknown for 4m is not unhealthy yet: %v", rep.Unhealthy)
	}
	b.wantActions()

	b.clock.Advance(time.Minute)
	rep := b.tick()
	b.wantActions("poweroff 12 hard")
	if !strings.Contains(rep.Unhealthy["12"], "Ready=Unknown for 5m0s") || rep.InFlight["12"] != "poweroff sent" {
		t.Fatalf("report after the poweroff: %+v", rep)
	}
	if line := b.published(); !strings.Contains(line, "VM 12 Node worker-12 Ready=Unknown") {
		t.Errorf("%s = %q", vmcontext.KeyPubRemediation, line)
	}

	b.clock.Advance(30 * time.Second)
	b.tick()
	b.wantActions("poweroff 12 hard", "resume 12")

	b.clock.Advance(5 * time.Minute)
	if rep := b.tick(); !strings.Contains(rep.InFlight["12"], "resumed") {
		t.Fatalf("within RecoverWait the resumed VM is waited for: %+v", rep)
	}
	b.wantActions("poweroff 12 hard", "resume 12")

	b.clock.Advance(5 * time.Minute)
	b.tick()
	b.wantActions("poweroff 12 hard", "resume 12", "terminate 12 hard")
	if b.nodeExists("worker-12") {
		t.Error("the Node of the replaced VM is still there")
	}
	if _, err := b.cs.CoreV1().Pods("default").Get(context.Background(), "web-12", metav1.GetOptions{}); err == nil {
		t.Errorf("the pod of the replaced Node was not drained: %+v", b.loop.Report().(RemediateReport).Actions)
	}
	if n := b.og.cardinality("worker"); n != 2 {
		t.Fatalf("OneFlow lowered the cardinality to %d, want 2", n)
	}

	// OneFlow is in COOLDOWN: no scale is asked for.
	b.og.with(func(f *fakeFlow) { f.cooldown = true })
	b.clock.Advance(time.Minute)
	rep = b.tick()
	if _, scales := b.og.log(); len(scales) != 0 {
		t.Fatalf("scaled in COOLDOWN: %v", scales)
	}
	if !strings.Contains(rep.InFlight["12"], "COOLDOWN") {
		t.Errorf("the wait for COOLDOWN is not reported: %+v", rep)
	}

	// RUNNING, but OneFlow refuses (a race with another scale): reported,
	// and not asked again before ScaleRetry.
	b.og.with(func(f *fakeFlow) {
		f.cooldown = false
		f.refuse = &onegate.Error{Method: "PUT", Path: "/service/role/worker", Status: 400, Body: "Error performing action on service 1 role worker"}
	})
	b.clock.Advance(time.Minute)
	rep = b.tick()
	if !strings.Contains(rep.Blocked["12"], "OneFlow refused the scale") {
		t.Errorf("the refusal is not reported: %+v", rep)
	}
	b.clock.Advance(time.Minute)
	b.tick()
	if _, scales := b.og.log(); len(scales) != 1 {
		t.Fatalf("retried blindly before ScaleRetry: %v", scales)
	}
	b.clock.Advance(DefaultRemediateConfig.ScaleRetry)
	b.tick()
	if _, scales := b.og.log(); !slices.Equal(scales, []string{"worker=3", "worker=3"}) {
		t.Fatalf("scales %v", scales)
	}
	if n := b.og.cardinality("worker"); n != 3 {
		t.Fatalf("cardinality %d after the restore, want 3", n)
	}

	b.clock.Advance(time.Minute)
	rep = b.tick()
	if len(rep.InFlight)+len(rep.Blocked)+len(rep.Unhealthy) != 0 || len(b.loop.ladders) != 0 {
		t.Errorf("after the restore: %+v, ladders %v", rep, b.loop.ladders)
	}
	var steps []string
	for _, a := range rep.Actions {
		steps = append(steps, a.Step)
	}
	if want := []string{"poweroff", "resume", "replace", "scale", "scale"}; !slices.Equal(steps, want) {
		t.Errorf("actions in the status %v, want %v", steps, want)
	}
	ev := b.events("worker-12")
	if len(ev) < 3 || !strings.Contains(ev[0], "poweroff") || !strings.Contains(ev[2], "terminate sent") {
		t.Errorf("events on worker-12: %q", ev)
	}
	if _, err := b.cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A VM powered off outside the cluster puts OneFlow in WARNING; it is
// resumed at once, which lifts WARNING.
func TestRemediateResumesAPoweredOffVM(t *testing.T) {
	b := newRemBed(t, nil, []int{11, 12, 13})
	b.og.with(func(f *fakeFlow) { f.vms[13].State = onegate.StatePoweroff })
	svc, _ := b.og.GetService(context.Background())
	if svc.State != onegate.ServiceWarning {
		t.Fatalf("fake: service state %d, want WARNING", svc.State)
	}
	b.tick()
	b.wantActions("resume 13")
	svc, _ = b.og.GetService(context.Background())
	if svc.State != onegate.ServiceRunning {
		t.Errorf("service state %d after the resume, want RUNNING", svc.State)
	}
}

// A VM in a *_FAILURE state goes straight to replace. OneFlow drops it at
// DONE but stays in WARNING (only a VM emitting RUNNING ends it), so the
// scale is not asked: the status says why and what the owner does, with
// no retry loop; once a VM runs again (the owner power-cycled one) the
// cardinality is restored.
func TestRemediateReplacesAFailedVM(t *testing.T) {
	b := newRemBed(t, nil, []int{11, 12, 13})
	b.og.with(func(f *fakeFlow) { f.vms[11].LCMState = 39 }) // PROLOG_FAILURE
	b.tick()
	b.wantActions("terminate 11 hard")
	for range 3 {
		b.clock.Advance(time.Minute)
		rep := b.tick()
		if !strings.Contains(rep.InFlight["11"], "power-cycles one VM of role worker") {
			t.Fatalf("in flight %q, want the sticky WARNING explained", rep.InFlight["11"])
		}
	}
	if _, scales := b.og.log(); len(scales) != 0 {
		t.Fatalf("scales %v asked in WARNING", scales)
	}
	if !strings.Contains(b.published(), "oneflow-server restarts") {
		t.Errorf("published %q", b.published())
	}
	b.og.with(func(f *fakeFlow) { f.warning = false }) // the owner's power cycle
	b.clock.Advance(time.Minute)
	b.tick()
	if _, scales := b.og.log(); !slices.Equal(scales, []string{"worker=3"}) {
		t.Fatalf("scales %v, want worker=3 once OneFlow left WARNING", scales)
	}
}

// A terminate oned refuses is sent again after ActionTimeout, not each
// pass, and the status says it was refused.
func TestRemediateRefusedTerminateDoesNotLoop(t *testing.T) {
	b := newRemBed(t, nil, []int{11, 12, 13})
	b.og.with(func(f *fakeFlow) {
		f.vms[11].LCMState = 39 // PROLOG_FAILURE
		f.refuseAct = &onegate.Error{Method: "POST", Path: "/vms/11/action", Status: 500, Body: "Internal server error"}
	})
	b.tick()
	for range 4 {
		b.clock.Advance(time.Minute)
		rep := b.tick()
		if !strings.Contains(rep.InFlight["11"], "terminate refused") {
			t.Errorf("in flight %q", rep.InFlight["11"])
		}
	}
	b.wantActions("terminate 11 hard")
	b.clock.Advance(time.Minute)
	b.tick()
	b.wantActions("terminate 11 hard", "terminate 11 hard")
}

// A partition turns its Nodes NotReady a few seconds apart: the first
// past UnhealthyAfter is not remediated while another is NotReady too
// (2 of 3 workers), and nothing is done until they recover.
func TestRemediateShortCircuitCountsNotReadyYet(t *testing.T) {
	b := newRemBed(t, nil, []int{11, 12, 13})
	b.sick("worker-11", corev1.ConditionUnknown, 5*time.Minute+time.Second)
	b.sick("worker-12", corev1.ConditionUnknown, 4*time.Minute+50*time.Second)
	rep := b.tick()
	b.wantActions()
	if len(rep.Stopped) != 1 || !strings.Contains(rep.Stopped[0], "2 of 3 workers") {
		t.Errorf("stopped %q", rep.Stopped)
	}
}

// Remediation sends OCA's -hard names with no params: what the real
// client turns into perform poweroff/terminate with params true.
func TestRemediateSendsHardNames(t *testing.T) {
	b := newRemBed(t, nil, []int{11, 12, 13})
	b.sick("worker-12", corev1.ConditionUnknown, 6*time.Minute)
	b.tick()
	b.og.with(func(f *fakeFlow) {
		if want := []string{"poweroff-hard map[]"}; !slices.Equal(f.raw, want) {
			t.Errorf("sent %q, want %q", f.raw, want)
		}
	})
}

// A VM running for StartupTimeout without a Node is unhealthy.
func TestRemediateVMWithoutNode(t *testing.T) {
	b := newRemBed(t, nil, []int{11, 12, 13})
	b.og.add("worker", 14)
	b.tick() // the clock starts
	b.clock.Advance(14 * time.Minute)
	b.tick()
	b.wantActions()
	b.clock.Advance(time.Minute)
	rep := b.tick()
	b.wantActions("poweroff 14 hard")
	if !strings.Contains(rep.Unhealthy["14"], "no Node 15m0s") {
		t.Errorf("reason %q", rep.Unhealthy["14"])
	}
}

// Two of three workers unhealthy (a partition?): nothing is done, and it
// says so.
func TestRemediateShortCircuit(t *testing.T) {
	b := newRemBed(t, nil, []int{11, 12, 13})
	b.sick("worker-11", corev1.ConditionUnknown, 10*time.Minute)
	b.sick("worker-12", corev1.ConditionUnknown, 10*time.Minute)
	for range 3 {
		rep := b.tick()
		if len(rep.Stopped) != 1 || !strings.Contains(rep.Stopped[0], "2 of 3 workers") {
			t.Fatalf("stopped: %q", rep.Stopped)
		}
		b.clock.Advance(time.Hour)
	}
	b.wantActions()
	if !b.nodeExists("worker-11") || !b.nodeExists("worker-12") {
		t.Error("a Node was deleted during a short-circuit")
	}
	if line := b.published(); !strings.Contains(line, "2 of 3 workers unhealthy") {
		t.Errorf("%s = %q", vmcontext.KeyPubRemediation, line)
	}
}

// A master is replaced only with its etcd member removed first, and not
// at all when the removal is refused (quorum); two sick masters of three
// stop master remediation; the acting master never acts on itself.
func TestRemediateMasters(t *testing.T) {
	t.Run("replaced after its member", func(t *testing.T) {
		b := newRemBed(t, []int{14, 15}, []int{11})
		b.og.with(func(f *fakeFlow) { f.vms[15].LCMState = 36 }) // BOOT_FAILURE
		b.sick("master-15", corev1.ConditionUnknown, 10*time.Minute)
		b.tick()
		b.wantActions("terminate 15 hard")
		if !slices.Equal(b.members.removed, []string{"master-15"}) || b.nodeExists("master-15") {
			t.Errorf("members removed %v, Node left %v", b.members.removed, b.nodeExists("master-15"))
		}
	})
	t.Run("quorum refusal keeps everything", func(t *testing.T) {
		b := newRemBed(t, []int{14, 15}, []int{11})
		b.members.refuse = errors.New("removing member master-15 would leave 1 of 2 members healthy, below quorum 2")
		b.og.with(func(f *fakeFlow) { f.vms[15].LCMState = 36 })
		rep := b.tick()
		b.wantActions()
		if !b.nodeExists("master-15") || !strings.Contains(rep.Blocked["15"], "below quorum") {
			t.Errorf("Node kept %v, blocked %q", b.nodeExists("master-15"), rep.Blocked["15"])
		}
		if ev := b.events("master-15"); len(ev) != 1 || !strings.Contains(ev[0], "etcd member not removed") {
			t.Errorf("events %q", ev)
		}
	})
	t.Run("two of three sick", func(t *testing.T) {
		b := newRemBed(t, []int{14, 15}, []int{11})
		b.sick("master-14", corev1.ConditionUnknown, 10*time.Minute)
		b.sick("master-15", corev1.ConditionUnknown, 10*time.Minute)
		rep := b.tick()
		b.wantActions()
		if len(rep.Stopped) != 1 || !strings.Contains(rep.Stopped[0], "2 of 3 masters") {
			t.Errorf("stopped %q", rep.Stopped)
		}
	})
	t.Run("only two masters: no poweroff", func(t *testing.T) {
		b := newRemBed(t, []int{14}, []int{11})
		b.sick("master-14", corev1.ConditionUnknown, 10*time.Minute)
		rep := b.tick()
		b.wantActions()
		if !strings.Contains(rep.Blocked["14"], "quorum") {
			t.Errorf("blocked %q", rep.Blocked["14"])
		}
	})
	t.Run("self", func(t *testing.T) {
		b := newRemBed(t, []int{14, 15}, []int{11})
		b.sick("master-10", corev1.ConditionFalse, 10*time.Minute)
		rep := b.tick()
		b.wantActions()
		if !strings.Contains(rep.Blocked["10"], "itself") {
			t.Errorf("blocked %q", rep.Blocked["10"])
		}
	})
}

// The owner's switches: ONEAPP_K8S_REMEDIATION=off (Off), and the pause
// annotation on kube-system/onekube-remediation.
func TestRemediatePause(t *testing.T) {
	b := newRemBed(t, nil, []int{11, 12, 13})
	b.sick("worker-12", corev1.ConditionUnknown, 10*time.Minute)
	b.loop.Off = vmcontext.KeyRemediation + "=off"
	if rep := b.tick(); !strings.HasPrefix(rep.State, "off: ") || !strings.Contains(rep.Blocked["12"], "off") {
		t.Fatalf("report %+v", rep)
	}
	b.wantActions()

	b.loop.Off = ""
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: PauseConfigMap, Namespace: "kube-system", Annotations: map[string]string{AnnotationPause: "true"}}}
	if _, err := b.cs.CoreV1().ConfigMaps("kube-system").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rep := b.tick()
	b.wantActions()
	if !strings.HasPrefix(rep.State, "paused: ") || !strings.Contains(b.published(), "paused") {
		t.Fatalf("report %+v, published %q", rep, b.published())
	}

	cm.Annotations[AnnotationPause] = "false"
	if _, err := b.cs.CoreV1().ConfigMaps("kube-system").Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	b.tick()
	b.wantActions("poweroff 12 hard")
}

// Siblings writing OneGate keys can neither trigger remediation nor pause
// it: every USER_TEMPLATE key a VM may write, on every VM, changes nothing
// about a healthy cluster, and keys that look like a pause on the acting
// master or the broken VM do not hold a remediation back. A Node's
// kubelet-writable label cannot move a verdict to another VM either.
func TestRemediateForgedKeysIgnored(t *testing.T) {
	forged := map[string]string{
		vmcontext.KeyReady: "NO", vmcontext.KeyPubPhase: "failed", vmcontext.KeyPubError: "kubelet dead",
		vmcontext.KeyRoleName: "master", vmcontext.KeyServiceID: "7", vmcontext.KeyPubNodeName: "worker-12",
		vmcontext.KeyRemediation: "off", "ONEKUBE_REMEDIATION": "paused", vmcontext.KeyPubRemediation: "paused",
		"ONEGATE_K8S_REMEDIATION_PAUSED": "true", "STATE": "8", "LCM_STATE": "36",
	}
	t.Run("no trigger", func(t *testing.T) {
		b := newRemBed(t, []int{14, 15}, []int{11, 12, 13})
		b.og.with(func(f *fakeFlow) {
			for _, vm := range f.vms {
				for k, v := range forged {
					vm.UserTemplate[k] = v
				}
			}
		})
		// A Node without a provider ID, NotReady, labelled as VM 12's.
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "impostor", Labels: map[string]string{kubeadm.LabelVMID: "12"}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))}}}}
		if _, err := b.cs.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			if rep := b.tick(); len(rep.Unhealthy) != 0 || rep.State != "on" {
				t.Fatalf("a forged key made a verdict: %+v", rep)
			}
			b.clock.Advance(time.Hour)
		}
		b.wantActions()
		if _, scales := b.og.log(); len(scales) != 0 {
			t.Fatalf("scales %v", scales)
		}
	})
	// Root on worker 13 deletes its Node (onekube:node-self-removal) and
	// registers it again, NotReady, with master 14's provider ID:
	// NodeRestriction checks only the name, labels and configSource of a
	// Node a kubelet creates. Neither VM is judged by it.
	t.Run("a Node re-registered with another VM's provider ID", func(t *testing.T) {
		b := newRemBed(t, []int{14, 15}, []int{11, 12, 13})
		ctx := context.Background()
		if err := b.cs.CoreV1().Nodes().Delete(ctx, "worker-13", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-13", Labels: map[string]string{kubeadm.LabelVMID: "14"}},
			Spec: corev1.NodeSpec{ProviderID: kubeadm.ProviderID(14)},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown,
				LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))}}}}
		if _, err := b.cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			if rep := b.tick(); len(rep.Unhealthy) != 0 {
				t.Fatalf("a re-registered Node made a verdict: %+v", rep)
			}
			b.clock.Advance(time.Hour)
		}
		b.wantActions()
		if len(b.members.removed) != 0 {
			t.Fatalf("etcd members removed: %v", b.members.removed)
		}
	})
	t.Run("no pause", func(t *testing.T) {
		b := newRemBed(t, nil, []int{11, 12, 13})
		b.og.with(func(f *fakeFlow) {
			for _, id := range []int{10, 12} {
				for k, v := range forged {
					f.vms[id].UserTemplate[k] = v
				}
			}
		})
		b.sick("worker-12", corev1.ConditionUnknown, 10*time.Minute)
		if rep := b.tick(); rep.State != "on" {
			t.Fatalf("state %q", rep.State)
		}
		b.wantActions("poweroff 12 hard")
	})
}

// The loop is leader-only in the runner: registered like cleanup, it runs
// only while this master acts.
func TestRemediateRunsUnderTheRunner(t *testing.T) {
	b := newRemBed(t, nil, []int{11, 12, 13})
	b.sick("worker-12", corev1.ConditionUnknown, 10*time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	board := NewStatusBoard("")
	r := &Runner{Loops: []Spec{{Loop: b.loop, LeaderOnly: true}}, Clock: b.clock, Status: board}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if got, _ := b.og.log(); len(got) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the runner never ticked remediate")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, ok := board.Snapshot().Loops["remediate"]; !ok {
		t.Error("no remediate entry in the status")
	}
}

// Replacements drain one Node per pass, so a tick stays within one
// DrainTimeout whatever the number of broken nodes.
func TestRemediateOneDrainPerPass(t *testing.T) {
	b := newRemBed(t, nil, []int{11, 12, 13, 14, 15, 16})
	var drained []string
	b.loop.Drain = func(_ context.Context, _ kubernetes.Interface, node string, _ time.Duration) error {
		drained = append(drained, node)
		return nil
	}
	b.og.with(func(f *fakeFlow) { f.vms[11].LCMState, f.vms[12].LCMState = 36, 36 })
	rep := b.tick()
	b.wantActions("terminate 11 hard")
	if !slices.Equal(drained, []string{"worker-11"}) || !strings.Contains(rep.InFlight["12"], "next pass") {
		t.Fatalf("drained %v, in flight %v", drained, rep.InFlight)
	}
	b.clock.Advance(time.Minute)
	b.tick()
	if !slices.Equal(drained, []string{"worker-11", "worker-12"}) {
		t.Fatalf("drained %v", drained)
	}
}
