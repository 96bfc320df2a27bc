package serve

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/onekube/onekube/agent/autoscale"
	"github.com/onekube/onekube/agent/system/systemtest"
)

// newZeroWorkerBed: master VM 1 (a tainted Node of 2 CPU) and a worker
// role of cardinality 0, so no worker Node to copy a template from.
func newZeroWorkerBed(t *testing.T, bounds autoscale.Bounds, size string, objs ...runtime.Object) *autoscaleBed {
	t.Helper()
	svc := newFakeService(1)
	svc.add("master", 1, nil)
	svc.add("worker", 10, nil)
	svc.remove(10) // the role stays, with no VM
	m := asNode("m1", 1, "2")
	m.Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
	cs := fake.NewClientset(append([]runtime.Object{m}, objs...)...)
	b := &autoscaleBed{svc: svc, flow: &fakeOneFlow{svc: svc, nextID: 10}, drain: &fakeScaleDownDrainer{},
		clock: systemtest.NewClock(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)), client: cs}
	b.loop = &Autoscale{OneGate: svc, Scaler: b.flow, Actions: b.flow, Client: cs, Drainer: b.drain, Clock: b.clock,
		Bounds: bounds, Role: "worker"}
	if size != "" {
		w, ok, err := autoscale.ParseWorkerSize(size)
		if err != nil || !ok {
			t.Fatalf("ParseWorkerSize(%q): %v", size, err)
		}
		b.loop.VMTemplate = func() (autoscale.WorkerSize, bool) { return w, true }
	}
	return b
}

func selecting(p *corev1.Pod, k, v string) *corev1.Pod {
	p.Spec.NodeSelector = map[string]string{k: v}
	return p
}

func tolerating(p *corev1.Pod, k, v string) *corev1.Pod {
	p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: k, Operator: corev1.TolerationOpEqual, Value: v, Effect: corev1.TaintEffectNoSchedule})
	return p
}

// Scale from zero: with no worker Node, pending pods are judged on the
// worker role's VM size from the master's CONTEXT, its labels and taints
// honoured; a pod that fits no such worker is no reason to scale.
func TestAutoscaleFromZeroWorkers(t *testing.T) {
	t.Parallel()
	const size = "vcpu=2 memory=4096"
	gpu := "vcpu=2 memory=4096 labels=pool=gpu taints=dedicated=gpu:NoSchedule"
	cases := []struct {
		name     string
		bounds   autoscale.Bounds
		size     string
		pods     []runtime.Object
		want     []int
		reported string
	}{
		{name: "no VM size: pending pods cannot be judged", bounds: autoscale.Bounds{Min: 0, Max: 3},
			pods: []runtime.Object{asPod("a", "", "1500m", true)}, reported: "no VM size"},
		{name: "one pod asks for one worker of the VM size", bounds: autoscale.Bounds{Min: 0, Max: 3}, size: size,
			pods: []runtime.Object{asPod("a", "", "1500m", true)}, want: []int{1}},
		{name: "two pods of 1500m need two 2-CPU workers", bounds: autoscale.Bounds{Min: 0, Max: 3}, size: size,
			pods: []runtime.Object{asPod("a", "", "1500m", true), asPod("b", "", "1500m", true)}, want: []int{2}},
		{name: "a pod bigger than the VM size asks for nothing", bounds: autoscale.Bounds{Min: 0, Max: 3}, size: size,
			pods: []runtime.Object{asPod("huge", "", "3", true)}, reported: "fit_no_worker"},
		{name: "no pod: min 0 is kept", bounds: autoscale.Bounds{Min: 0, Max: 3}, size: size},
		{name: "no pod, below min: raised even with no VM size", bounds: autoscale.Bounds{Min: 1, Max: 3}, want: []int{1}},
		{name: "a node selector the template's label satisfies", bounds: autoscale.Bounds{Min: 0, Max: 3}, size: gpu,
			pods: []runtime.Object{tolerating(selecting(asPod("a", "", "1", true), "pool", "gpu"), "dedicated", "gpu")}, want: []int{1}},
		{name: "a node selector no worker satisfies", bounds: autoscale.Bounds{Min: 0, Max: 3}, size: size,
			pods: []runtime.Object{selecting(asPod("a", "", "1", true), "pool", "gpu")}, reported: "fit_no_worker"},
		{name: "the template's taint keeps an intolerant pod off", bounds: autoscale.Bounds{Min: 0, Max: 3}, size: gpu,
			pods: []runtime.Object{selecting(asPod("a", "", "1", true), "pool", "gpu")}, reported: "fit_no_worker"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := newZeroWorkerBed(t, c.bounds, c.size, c.pods...)
			r := b.tick(t)
			if !slices.Equal(b.flow.scales, c.want) {
				t.Errorf("scales = %v, want %v (report %s)", b.flow.scales, c.want, reportText(r))
			}
			if c.reported != "" && !strings.Contains(reportText(r), c.reported) {
				t.Errorf("report %s lacks %q", reportText(r), c.reported)
			}
		})
	}
}

// A worker Node, once there, is the template again: the VM size is only
// for a role with no Ready worker to copy.
func TestAutoscaleTemplatePrefersANode(t *testing.T) {
	t.Parallel()
	// The VM size says 1 CPU; the Node of the role (VM 10) has 4: a
	// 3-CPU pod fits a copy of the Node.
	b := newAutoscaleBed(t, autoscale.Bounds{Min: 1, Max: 5},
		asPod("fill-10", "w10", "4", false), asPod("fill-11", "w11", "4", false), asPod("m-fill", "m1", "2", false),
		asPod("big", "", "3", true))
	w, _, _ := autoscale.ParseWorkerSize("vcpu=1 memory=2048")
	b.loop.VMTemplate = func() (autoscale.WorkerSize, bool) { return w, true }
	b.tick(t)
	if !slices.Equal(b.flow.scales, []int{3}) {
		t.Errorf("scales = %v, want [3]", b.flow.scales)
	}
}
