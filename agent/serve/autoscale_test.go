package serve

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/onekube/onekube/agent/autoscale"
	"github.com/onekube/onekube/agent/system/systemtest"
	"github.com/onekube/onekube/context/onegate"
)

// fakeOneFlow answers the autoscaler's OneGate writes as OneFlow does:
// a scale adds VMs to the role and puts the service in COOLDOWN; a
// terminate drops the VM (at DONE) and so lowers the cardinality.
type fakeOneFlow struct {
	mu         sync.Mutex
	svc        *fakeService
	nextID     int
	refuse     bool // answer every scale with OneGate's generic 400
	scales     []int
	terminated []int
	actions    []string
}

func (f *fakeOneFlow) ScaleRole(_ context.Context, role string, n int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scales = append(f.scales, n)
	if f.refuse {
		return &onegate.Error{Method: http.MethodPut, Path: "/service/role/" + role, Status: http.StatusBadRequest,
			Body: "Error performing action on service 1 role " + role}
	}
	svc, _ := f.svc.GetService(context.Background())
	for have := len(svc.Role(role).Nodes); have < n; have++ {
		f.nextID++
		f.svc.add(role, f.nextID, nil)
	}
	f.svc.set(func(s *fakeService) { s.state = onegate.ServiceCooldown })
	return nil
}

func (f *fakeOneFlow) Action(_ context.Context, vmID int, perform string, _ map[string]string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.actions = append(f.actions, perform)
	if perform == "terminate" {
		f.terminated = append(f.terminated, vmID)
		f.svc.remove(vmID)
	}
	return nil
}

type fakeScaleDownDrainer struct {
	drained, uncordoned []string
	fail                error
}

func (d *fakeScaleDownDrainer) Drain(_ context.Context, node string, blocker func([]corev1.Pod) string) error {
	d.drained = append(d.drained, node)
	return d.fail
}

func (d *fakeScaleDownDrainer) Uncordon(_ context.Context, node string) error {
	d.uncordoned = append(d.uncordoned, node)
	return nil
}

func asNode(name string, vmid int, cpu string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name, "onekube.io/vm-id": strconv.Itoa(vmid)}},
		Spec:       corev1.NodeSpec{ProviderID: "one://" + strconv.Itoa(vmid)},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
}

func asPod(name, node, cpu string, unschedulable bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u", Controller: new(true)}}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if unschedulable {
		p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}}
	}
	return p
}

// autoscaleBed: master VM 1, workers VM 10 and 11, each a Node of 4 CPU
// with its provider ID.
type autoscaleBed struct {
	svc    *fakeService
	flow   *fakeOneFlow
	drain  *fakeScaleDownDrainer
	clock  *systemtest.Clock
	loop   *Autoscale
	client *fake.Clientset
}

func newAutoscaleBed(t *testing.T, bounds autoscale.Bounds, objs ...runtime.Object) *autoscaleBed {
	t.Helper()
	svc := newFakeService(1)
	svc.add("master", 1, nil)
	svc.add("worker", 10, nil)
	svc.add("worker", 11, nil)
	objs = append([]runtime.Object{asNode("m1", 1, "2"), asNode("w10", 10, "4"), asNode("w11", 11, "4")}, objs...)
	cs := fake.NewClientset(objs...)
	b := &autoscaleBed{svc: svc, flow: &fakeOneFlow{svc: svc, nextID: 11}, drain: &fakeScaleDownDrainer{},
		clock: systemtest.NewClock(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)), client: cs}
	b.loop = &Autoscale{OneGate: svc, Scaler: b.flow, Actions: b.flow, Client: cs, Drainer: b.drain, Clock: b.clock,
		Bounds: bounds, Role: "worker"}
	return b
}

func (b *autoscaleBed) tick(t *testing.T) AutoscaleReport {
	t.Helper()
	if _, err := b.loop.Tick(context.Background()); err != nil {
		t.Fatalf("Tick: %v", err)
	}
	return b.loop.Report().(AutoscaleReport)
}

// Workers full, a 3-CPU pod Unschedulable: one more worker is asked for;
// in COOLDOWN nothing is asked and the report says why; back in RUNNING
// the VM still booting counts as an upcoming node, so the same pod asks
// for nothing more.
func TestAutoscaleScaleUp(t *testing.T) {
	t.Parallel()
	b := newAutoscaleBed(t, autoscale.Bounds{Min: 1, Max: 5},
		asPod("fill-10", "w10", "4", false), asPod("fill-11", "w11", "4", false), asPod("m-fill", "m1", "2", false),
		asPod("big", "", "3", true))
	r := b.tick(t)
	if len(b.flow.scales) != 1 || b.flow.scales[0] != 3 {
		t.Fatalf("scales = %v, want [3]", b.flow.scales)
	}
	if !strings.Contains(r.LastScaleUp, "worker 2 -> 3") {
		t.Errorf("report = %+v", r)
	}
	r = b.tick(t)
	if len(b.flow.scales) != 1 || !strings.Contains(r.Refused, "COOLDOWN") {
		t.Fatalf("in COOLDOWN: scales = %v, report %+v", b.flow.scales, r)
	}
	b.svc.set(func(s *fakeService) { s.state = onegate.ServiceRunning })
	b.tick(t)
	if len(b.flow.scales) != 1 {
		t.Fatalf("the upcoming worker was not counted: scales = %v", b.flow.scales)
	}
}

func TestAutoscaleScaleUpDecisions(t *testing.T) {
	t.Parallel()
	full := []runtime.Object{asPod("fill-10", "w10", "4", false), asPod("fill-11", "w11", "4", false), asPod("m-fill", "m1", "2", false)}
	cases := []struct {
		name     string
		bounds   autoscale.Bounds
		state    int
		pods     []runtime.Object
		want     []int
		reported string
	}{
		{name: "a pod no worker can hold asks for nothing", bounds: autoscale.Bounds{Min: 1, Max: 5},
			pods: []runtime.Object{asPod("huge", "", "64", true)}, reported: "fit_no_worker"},
		{name: "at max nothing is asked", bounds: autoscale.Bounds{Min: 1, Max: 2},
			pods: []runtime.Object{asPod("big", "", "3", true)}, reported: "over_max"},
		{name: "two 3-CPU pods ask for two workers", bounds: autoscale.Bounds{Min: 1, Max: 5},
			pods: []runtime.Object{asPod("a", "", "3", true), asPod("b", "", "3", true)}, want: []int{4}},
		{name: "the step stops at max", bounds: autoscale.Bounds{Min: 1, Max: 3},
			pods: []runtime.Object{asPod("a", "", "3", true), asPod("b", "", "3", true)}, want: []int{3}},
		{name: "below min the role is raised with no pod waiting", bounds: autoscale.Bounds{Min: 4, Max: 5},
			want: []int{4}},
		{name: "in WARNING nothing is asked", bounds: autoscale.Bounds{Min: 4, Max: 5}, state: 4,
			pods: []runtime.Object{asPod("big", "", "3", true)}, reported: "WARNING"},
		{name: "a pod the scheduler has not tried yet asks for nothing", bounds: autoscale.Bounds{Min: 1, Max: 5},
			pods: []runtime.Object{func() *corev1.Pod { p := asPod("new", "", "3", false); p.Status.Phase = corev1.PodPending; return p }()}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := newAutoscaleBed(t, c.bounds, append(append([]runtime.Object{}, full...), c.pods...)...)
			if c.state != 0 {
				b.svc.set(func(s *fakeService) { s.state = c.state })
			}
			r := b.tick(t)
			if !slices.Equal(b.flow.scales, c.want) {
				t.Errorf("scales = %v, want %v", b.flow.scales, c.want)
			}
			if c.reported != "" && !strings.Contains(reportText(r), c.reported) {
				t.Errorf("report %s lacks %q", reportText(r), c.reported)
			}
		})
	}
}

// OneGate's 400 to a RUNNING service (max_vms) is reported and not asked
// again until the service changes.
func TestAutoscaleRefusalNotRetried(t *testing.T) {
	t.Parallel()
	b := newAutoscaleBed(t, autoscale.Bounds{Min: 1, Max: 5},
		asPod("fill-10", "w10", "4", false), asPod("fill-11", "w11", "4", false), asPod("m-fill", "m1", "2", false),
		asPod("big", "", "3", true))
	b.flow.refuse = true
	r := b.tick(t)
	if len(b.flow.scales) != 1 || !strings.Contains(r.Refused, "max_vms") {
		t.Fatalf("scales %v, report %+v", b.flow.scales, r)
	}
	for range 3 {
		r = b.tick(t)
	}
	if len(b.flow.scales) != 1 || !strings.Contains(r.Refused, "refused cardinality 3") {
		t.Fatalf("retried in the same world: scales %v, report %+v", b.flow.scales, r)
	}
	b.clock.Advance(DefaultRefusalRecheck - time.Minute)
	b.tick(t)
	if len(b.flow.scales) != 1 {
		t.Fatalf("asked again before the recheck: scales %v", b.flow.scales)
	}
	// The service went through COOLDOWN (someone scaled it) and back.
	b.svc.set(func(s *fakeService) { s.state = onegate.ServiceCooldown })
	b.tick(t)
	b.svc.set(func(s *fakeService) { s.state = onegate.ServiceRunning })
	b.tick(t)
	if !slices.Equal(b.flow.scales, []int{3, 3}) {
		t.Fatalf("not asked again after the service changed: scales %v", b.flow.scales)
	}
	// A max_vms raised by the owner shows nowhere a VM can read: after
	// DefaultRefusalRecheck the loop asks once more.
	b.tick(t)
	b.clock.Advance(DefaultRefusalRecheck)
	b.tick(t)
	if len(b.flow.scales) != 3 {
		t.Fatalf("never rechecked: scales %v", b.flow.scales)
	}
}

// Two idle workers: VM 10 is the oldest and stays; VM 11 goes after the
// unneeded time, drained first, and exactly VM 11 is terminated.
func TestAutoscaleScaleDown(t *testing.T) {
	t.Parallel()
	b := newAutoscaleBed(t, autoscale.Bounds{Min: 1, Max: 5}, asPod("web", "w11", "100m", false))
	r := b.tick(t)
	if len(b.drain.drained) != 0 || r.Unneeded["w11"] == "" || r.Unneeded["w10"] != "" {
		t.Fatalf("first tick: drained %v, report %+v", b.drain.drained, r)
	}
	b.clock.Advance(9 * time.Minute)
	b.tick(t)
	if len(b.drain.drained) != 0 {
		t.Fatalf("drained before the unneeded time: %v", b.drain.drained)
	}
	b.clock.Advance(2 * time.Minute)
	r = b.tick(t)
	if !slices.Equal(b.drain.drained, []string{"w11"}) || !slices.Equal(b.flow.terminated, []int{11}) {
		t.Fatalf("drained %v, terminated %v, want w11 / VM 11", b.drain.drained, b.flow.terminated)
	}
	if !strings.Contains(r.LastScaleDown, "VM 11") {
		t.Errorf("report %+v", r)
	}
	// At the minimum (one worker left) nothing more goes.
	b.clock.Advance(time.Hour)
	b.tick(t)
	b.clock.Advance(time.Hour)
	b.tick(t)
	if len(b.flow.terminated) != 1 {
		t.Fatalf("went below min: terminated %v", b.flow.terminated)
	}
}

func TestAutoscaleScaleDownRules(t *testing.T) {
	t.Parallel()
	t.Run("never below min", func(t *testing.T) {
		t.Parallel()
		b := newAutoscaleBed(t, autoscale.Bounds{Min: 2, Max: 5})
		b.tick(t)
		b.clock.Advance(time.Hour)
		b.tick(t)
		if len(b.drain.drained)+len(b.flow.terminated) != 0 {
			t.Fatalf("drained %v terminated %v", b.drain.drained, b.flow.terminated)
		}
	})
	t.Run("the oldest VM when allowed", func(t *testing.T) {
		t.Parallel()
		b := newAutoscaleBed(t, autoscale.Bounds{Min: 1, Max: 5}, asPod("busy", "w11", "3", false))
		b.loop.AllowOldest = true
		b.tick(t)
		b.clock.Advance(time.Hour)
		b.tick(t)
		if !slices.Equal(b.flow.terminated, []int{10}) {
			t.Fatalf("terminated %v, want [10]", b.flow.terminated)
		}
	})
	t.Run("a failed drain uncordons and terminates nothing", func(t *testing.T) {
		t.Parallel()
		b := newAutoscaleBed(t, autoscale.Bounds{Min: 1, Max: 5})
		b.drain.fail = context.DeadlineExceeded
		b.tick(t)
		b.clock.Advance(time.Hour)
		if _, err := b.loop.Tick(context.Background()); err == nil {
			t.Fatal("no error from a failed drain")
		}
		if len(b.flow.terminated) != 0 || !slices.Equal(b.drain.uncordoned, []string{"w11"}) {
			t.Fatalf("terminated %v, uncordoned %v", b.flow.terminated, b.drain.uncordoned)
		}
	})
	t.Run("no VM actions, no scale-down", func(t *testing.T) {
		t.Parallel()
		b := newAutoscaleBed(t, autoscale.Bounds{Min: 1, Max: 5})
		b.loop.Actions = nil
		b.tick(t)
		b.clock.Advance(time.Hour)
		b.tick(t)
		if len(b.drain.drained) != 0 {
			t.Fatalf("drained %v", b.drain.drained)
		}
	})
	t.Run("a Node is a VM only by its provider ID", func(t *testing.T) {
		t.Parallel()
		// A Node that names VM 11 by label and name only, next to the
		// real one with a foreign provider ID: neither is VM 11's.
		impostor := asNode("w-11", 11, "4")
		impostor.Spec.ProviderID = ""
		b := newAutoscaleBed(t, autoscale.Bounds{Min: 1, Max: 5}, impostor)
		_ = b.client.CoreV1().Nodes().Delete(context.Background(), "w11", metav1.DeleteOptions{})
		b.tick(t)
		b.clock.Advance(time.Hour)
		b.tick(t)
		if len(b.flow.terminated) != 0 {
			t.Fatalf("terminated %v through a Node without the provider ID", b.flow.terminated)
		}
	})
}

// Trust: keys any sibling can write into its USER_TEMPLATE (bounds, role
// names, a pause or a scale request) move nothing; the loop never reads a
// sibling's USER_TEMPLATE (fakeService panics on the extended service).
func TestAutoscaleIgnoresSiblingKeys(t *testing.T) {
	t.Parallel()
	b := newAutoscaleBed(t, autoscale.Bounds{Min: 1, Max: 3}, asPod("fill-10", "w10", "4", false), asPod("fill-11", "w11", "4", false))
	hostile := map[string]string{"ONEAPP_K8S_AUTOSCALE": "0:50", "ROLE_NAME": "worker", "SERVICE_ID": "1",
		"ONEGATE_K8S_AUTOSCALE": "50", "ONEGATE_K8S_SCALE": "+10", "CPU": "64", "MEMORY": "999999"}
	b.svc.add("master", 2, hostile)
	b.svc.set(func(s *fakeService) {
		for _, vm := range s.vms {
			for k, v := range hostile {
				vm.UserTemplate[k] = v
			}
		}
	})
	for range 3 {
		b.tick(t)
		b.clock.Advance(time.Hour)
	}
	if len(b.flow.scales) != 0 || len(b.flow.terminated) != 0 {
		t.Fatalf("sibling keys moved the autoscaler: scales %v terminated %v", b.flow.scales, b.flow.terminated)
	}
	// The only USER_TEMPLATE read is this master's own, once: the mirror
	// of ONEGATE_K8S_AUTOSCALE learning what it shows (and overwriting
	// the forged value).
	if n, own := b.svc.count("GetVMByID"), b.svc.count("GetVM"); n != 0 || own > 1 {
		t.Fatalf("the loop read %d siblings' USER_TEMPLATEs and its own %d times", n, own)
	}
	if line := b.svc.ut(1, "ONEGATE_K8S_AUTOSCALE"); !strings.HasPrefix(line, "workers 2 (bounds 1:3)") {
		t.Errorf("ONEGATE_K8S_AUTOSCALE = %q", line)
	}
}

// Root on worker 12 re-registers its Node, empty, with busy worker 11's
// provider ID (NodeRestriction leaves spec.providerID free at creation):
// the scale-down must not take it for VM 11's Node and terminate VM 11.
func TestAutoscaleIgnoresANodeWithAnotherVMsProviderID(t *testing.T) {
	t.Parallel()
	forged := asNode("worker-12", 11, "4")
	b := newAutoscaleBed(t, autoscale.Bounds{Min: 1, Max: 5}, forged,
		asPod("fill-10", "w10", "4", false), asPod("fill-11", "w11", "4", false))
	b.svc.add("worker", 12, nil)
	for range 3 {
		b.tick(t)
		b.clock.Advance(11 * time.Minute)
	}
	if len(b.flow.terminated) != 0 || len(b.drain.drained) != 0 {
		t.Fatalf("a Node with another VM's provider ID got a VM scaled away: drained %v, terminated %v", b.drain.drained, b.flow.terminated)
	}
}

func reportText(r AutoscaleReport) string {
	var s strings.Builder
	s.WriteString(r.Refused + " " + r.Note + " ")
	if len(r.NoTemplate) > 0 {
		s.WriteString("fit_no_worker ")
	}
	if len(r.OverMax) > 0 {
		s.WriteString("over_max ")
	}
	return s.String()
}
