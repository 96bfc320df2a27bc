package autoscale

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The scale-up decision against the scheduler's own plugins. The cluster
// has one worker, w1, with 4 CPU; most cases fill it so that pending pods
// have nowhere to go.
func TestPlanScaleUp(t *testing.T) {
	t.Parallel()
	w1 := node("w1", "4", "8Gi")
	w1Zoned := node("w1", "4", "8Gi", withLabel(corev1.LabelTopologyZone, "a"))
	filler := pod("filler", "4", on("w1"))
	plain := tmplOf("4", "8Gi")
	dedicated := tmplOf("4", "8Gi", withTaint("dedicated", "batch", corev1.TaintEffectNoSchedule))
	many := func(n int, cpu string, mods ...podMod) []*corev1.Pod {
		var out []*corev1.Pod
		for i := range n {
			out = append(out, pod("p"+string(rune('a'+i)), cpu, append([]podMod{pending}, mods...)...))
		}
		return out
	}
	cases := []struct {
		name       string
		nodes      []*corev1.Node
		running    []*corev1.Pod
		pending    []*corev1.Pod
		tmpl       Template
		room       int
		wantNew    int
		helped     int
		noTemplate int
		fitsNow    int
		overMax    int
	}{
		{name: "a pod that fits a new worker's resources scales by one",
			nodes: []*corev1.Node{w1}, running: []*corev1.Pod{filler}, pending: many(1, "2"), tmpl: plain, room: 5,
			wantNew: 1, helped: 1},
		{name: "a pod bigger than any worker is no reason to scale",
			nodes: []*corev1.Node{w1}, running: []*corev1.Pod{filler}, pending: many(1, "64"), tmpl: plain, room: 5,
			noTemplate: 1},
		{name: "a pod that fits an existing node is no reason to scale",
			nodes: []*corev1.Node{w1}, pending: many(1, "2"), tmpl: plain, room: 5,
			fitsNow: 1},
		{name: "small pods are bin-packed: three of 1 CPU take one 4-CPU worker",
			nodes: []*corev1.Node{w1}, running: []*corev1.Pod{filler}, pending: many(3, "1"), tmpl: plain, room: 5,
			wantNew: 1, helped: 3},
		{name: "three pods of 3 CPU need three workers",
			nodes: []*corev1.Node{w1}, running: []*corev1.Pod{filler}, pending: many(3, "3"), tmpl: plain, room: 5,
			wantNew: 3, helped: 3},
		{name: "the step is bounded by max: the rest waits",
			nodes: []*corev1.Node{w1}, running: []*corev1.Pod{filler}, pending: many(3, "3"), tmpl: plain, room: 2,
			wantNew: 2, helped: 2, overMax: 1},
		{name: "no room, no scale",
			nodes: []*corev1.Node{w1}, running: []*corev1.Pod{filler}, pending: many(1, "1"), tmpl: plain, room: 0,
			overMax: 1},
		{name: "the role's taint: a pod without the toleration is no reason to scale",
			nodes: []*corev1.Node{w1}, running: []*corev1.Pod{filler}, pending: many(1, "1"), tmpl: dedicated, room: 5,
			noTemplate: 1},
		{name: "the role's taint: a pod tolerating it is a reason to scale",
			nodes: []*corev1.Node{w1}, running: []*corev1.Pod{filler},
			pending: many(1, "1", tolerate("dedicated", "batch", corev1.TaintEffectNoSchedule)), tmpl: dedicated, room: 5,
			wantNew: 1, helped: 1},
		{name: "a nodeSelector no worker carries is no reason to scale",
			nodes: []*corev1.Node{w1}, running: []*corev1.Pod{filler}, pending: many(1, "1", selector("disktype", "ssd")), tmpl: plain, room: 5,
			noTemplate: 1},
		{name: "a nodeSelector the workers carry is",
			nodes: []*corev1.Node{w1}, running: []*corev1.Pod{filler}, pending: many(1, "1", selector("disktype", "ssd")),
			tmpl: tmplOf("4", "8Gi", withLabel("disktype", "ssd")), room: 5,
			wantNew: 1, helped: 1},
		{name: "required node affinity to another zone is no reason to scale",
			nodes: []*corev1.Node{w1Zoned}, running: []*corev1.Pod{filler},
			pending: many(1, "1", nodeAffinityIn(corev1.LabelTopologyZone, "b")),
			tmpl:    tmplOf("4", "8Gi", withLabel(corev1.LabelTopologyZone, "a")), room: 5,
			noTemplate: 1},
		{name: "required node affinity to the workers' zone is",
			nodes: []*corev1.Node{w1Zoned}, running: []*corev1.Pod{filler},
			pending: many(1, "1", nodeAffinityIn(corev1.LabelTopologyZone, "a", "c")),
			tmpl:    tmplOf("4", "8Gi", withLabel(corev1.LabelTopologyZone, "a")), room: 5,
			wantNew: 1, helped: 1},
		{name: "hostname anti-affinity: three small replicas need three workers",
			nodes: []*corev1.Node{w1}, running: []*corev1.Pod{filler}, pending: many(3, "100m", antiAffine("web")), tmpl: plain, room: 5,
			wantNew: 3, helped: 3},
		{name: "anti-affinity with a running replica on the only node still scales by one",
			nodes:   []*corev1.Node{w1},
			running: []*corev1.Pod{pod("web-0", "100m", on("w1"), antiAffine("web"))},
			pending: many(1, "100m", antiAffine("web")), tmpl: plain, room: 5,
			wantNew: 1, helped: 1},
		{name: "topology spread across hosts: a full node with none of the app forces one replica per new worker",
			nodes: []*corev1.Node{w1}, running: []*corev1.Pod{filler}, pending: many(3, "100m", spread("api")), tmpl: plain, room: 5,
			wantNew: 3, helped: 3},
		{name: "topology spread, bounded by max",
			nodes: []*corev1.Node{w1}, running: []*corev1.Pod{filler}, pending: many(3, "100m", spread("api")), tmpl: plain, room: 1,
			wantNew: 1, helped: 1, overMax: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sim, err := NewSim(c.nodes, c.running)
			if err != nil {
				t.Fatal(err)
			}
			got := PlanScaleUp(sim, c.pending, c.tmpl, c.room)
			if got.New != c.wantNew || len(got.Helped) != c.helped || len(got.NoTemplate) != c.noTemplate ||
				len(got.FitsNow) != c.fitsNow || len(got.OverMax) != c.overMax {
				t.Errorf("PlanScaleUp = %+v, want new %d helped %d noTemplate %d fitsNow %d overMax %d",
					got, c.wantNew, c.helped, c.noTemplate, c.fitsNow, c.overMax)
			}
		})
	}
}

func TestUnschedulable(t *testing.T) {
	t.Parallel()
	gated := pod("g", "1", func(p *corev1.Pod) {
		p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}}}
	})
	fresh := pod("f", "1", func(p *corev1.Pod) { p.Status = corev1.PodStatus{Phase: corev1.PodPending} })
	for _, c := range []struct {
		p    *corev1.Pod
		want bool
	}{
		{pod("u", "1", pending), true},
		{pod("r", "1"), false},
		{gated, false},
		{fresh, false},
		{pod("b", "1", pending, on("w1")), false},
	} {
		if got := Unschedulable(c.p); got != c.want {
			t.Errorf("Unschedulable(%s) = %v, want %v", c.p.Name, got, c.want)
		}
	}
}

// A template copied from a running worker keeps what every new worker
// shares and drops what belongs to that one node.
func TestTemplateFromNode(t *testing.T) {
	t.Parallel()
	n := node("w1", "4", "8Gi", withLabel(labelVMID, "7"), withLabel("disktype", "ssd"),
		withTaint("node.kubernetes.io/not-ready", "", corev1.TaintEffectNoSchedule),
		withTaint("ToBeDeletedByClusterAutoscaler", "", corev1.TaintEffectNoSchedule),
		withTaint("dedicated", "batch", corev1.TaintEffectNoSchedule))
	tm := TemplateFromNode(n)
	if _, has := tm.Labels[labelVMID]; has {
		t.Error("the VM ID label was kept")
	}
	if tm.Labels["disktype"] != "ssd" {
		t.Error("a shared label was dropped")
	}
	if len(tm.Taints) != 1 || tm.Taints[0].Key != "dedicated" {
		t.Errorf("taints = %v, want only dedicated", tm.Taints)
	}
	made := tm.Node("t1")
	if made.Labels[corev1.LabelHostname] != "t1" || made.Status.Allocatable.Cpu().Value() != 4 {
		t.Errorf("template node = %+v", made)
	}
}

func TestTemplateFromVM(t *testing.T) {
	t.Parallel()
	tm, err := TemplateFromVM(6, 6144)
	if err != nil {
		t.Fatal(err)
	}
	if got := tm.Allocatable.Cpu().Value(); got != 6 {
		t.Errorf("cpu = %d, want 6", got)
	}
	mem := tm.Allocatable.Memory().Value() >> 20
	if mem >= 6144-100 || mem < 5000 {
		t.Errorf("memory = %d MiB, want below MEMORY less the eviction threshold", mem)
	}
	if len(tm.Taints) != 0 || !slices.Contains([]string{"linux"}, tm.Labels[corev1.LabelOSStable]) {
		t.Errorf("template = %+v", tm)
	}
	for _, bad := range [][2]int{{0, 2048}, {2, 0}, {-1, 4096}} {
		if _, err := TemplateFromVM(bad[0], bad[1]); err == nil {
			t.Errorf("TemplateFromVM(%d, %d): no error", bad[0], bad[1])
		}
	}
}
