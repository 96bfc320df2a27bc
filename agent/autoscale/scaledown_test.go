package autoscale

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// The scale-down verdict on w2, against the scheduler's plugins and the
// cluster-autoscaler's drainability rules. w1 is the destination.
func TestPlanScaleDown(t *testing.T) {
	t.Parallel()
	w1 := node("w1", "4", "8Gi")
	w2 := node("w2", "4", "8Gi")
	small := func(name string, mods ...podMod) *corev1.Pod {
		return pod(name, "100m", append([]podMod{on("w2")}, mods...)...)
	}
	cases := []struct {
		name   string
		nodes  []*corev1.Node
		pods   []*corev1.Pod
		pdbs   []policyv1.PodDisruptionBudget
		want   bool
		reason string // a substring of the reason when not removable
	}{
		{name: "an idle node whose replicated pod fits elsewhere goes",
			pods: []*corev1.Pod{small("web-1")}, want: true},
		{name: "an empty node goes", want: true},
		{name: "DaemonSet and mirror pods need no move",
			pods: []*corev1.Pod{small("ds-1", daemon), small("static", bare, annotate(annotationMirror, "x"))}, want: true},
		{name: "a busy node stays",
			pods: []*corev1.Pod{pod("big", "3", on("w2"))}, reason: "not below"},
		{name: "a pod with no controller blocks",
			pods: []*corev1.Pod{small("lonely", bare)}, reason: "not managed by a controller"},
		{name: "safe-to-evict=true lifts the no-controller rule",
			pods: []*corev1.Pod{small("lonely", bare, annotate(AnnotationSafeToEvict, "true"))}, want: true},
		{name: "local storage blocks",
			pods: []*corev1.Pod{small("cache", emptyDir)}, reason: "local storage"},
		{name: "local storage annotated safe-to-evict=true goes",
			pods: []*corev1.Pod{small("cache", emptyDir, annotate(AnnotationSafeToEvict, "true"))}, want: true},
		{name: "safe-to-evict=false blocks",
			pods: []*corev1.Pod{small("pinned", annotate(AnnotationSafeToEvict, "false"))}, reason: "safe-to-evict=false"},
		{name: "a kube-system pod with no PDB blocks",
			pods: []*corev1.Pod{small("coredns-1", ns("kube-system"), app("dns"))}, reason: "kube-system"},
		{name: "a kube-system pod with a PDB allowing a disruption goes",
			pods: []*corev1.Pod{small("coredns-1", ns("kube-system"), app("dns"))},
			pdbs: []policyv1.PodDisruptionBudget{pdb("kube-system", "dns", 1)}, want: true},
		{name: "a PDB allowing no disruption blocks",
			pods: []*corev1.Pod{small("web-1", app("web"))},
			pdbs: []policyv1.PodDisruptionBudget{pdb("default", "web", 0)}, reason: "allows no disruption"},
		{name: "a PDB allowing one disruption blocks two pods on the node",
			pods: []*corev1.Pod{small("web-1", app("web")), small("web-2", app("web"))},
			pdbs: []policyv1.PodDisruptionBudget{pdb("default", "web", 1)}, reason: "need more"},
		{name: "a pod that fits no other node blocks",
			pods: []*corev1.Pod{pod("filler", "4", on("w1")), small("web-1")}, reason: "fits no other node"},
		{name: "a pod whose nodeSelector only this node matches blocks",
			nodes: []*corev1.Node{w1, node("w2", "4", "8Gi", withLabel("disktype", "ssd"))},
			pods:  []*corev1.Pod{small("db-1", selector("disktype", "ssd"))}, reason: "fits no other node"},
		{name: "anti-affinity with the replica on the other node blocks",
			pods:   []*corev1.Pod{pod("web-0", "100m", on("w1"), antiAffine("web")), small("web-1", antiAffine("web"))},
			reason: "fits no other node"},
		{name: "a node annotated scale-down-disabled stays",
			nodes: []*corev1.Node{w1, node("w2", "4", "8Gi", func(n *corev1.Node) {
				n.Annotations = map[string]string{AnnotationScaleDownDisable: "true"}
			})}, reason: "scale-down-disabled"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			nodes := c.nodes
			if nodes == nil {
				nodes = []*corev1.Node{w1, w2}
			}
			got, err := PlanScaleDown(ScaleDownInput{Nodes: nodes, Pods: c.pods, PDBs: c.pdbs, Candidates: []string{"w2"}, Threshold: 0.5})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("verdicts = %+v, want one", got)
			}
			if got[0].Removable != c.want || (!c.want && !strings.Contains(got[0].Reason, c.reason)) {
				t.Errorf("verdict = %+v, want removable %v (reason ~ %q)", got[0], c.want, c.reason)
			}
		})
	}
}

// Only the candidates are judged: a master or the oldest worker, left out
// by the loop, gets no verdict.
func TestPlanScaleDownCandidatesOnly(t *testing.T) {
	t.Parallel()
	got, err := PlanScaleDown(ScaleDownInput{Nodes: []*corev1.Node{node("m1", "2", "4Gi"), node("w1", "4", "8Gi")},
		Candidates: []string{"w1", "gone"}, Threshold: 0.5})
	if err != nil || len(got) != 1 || got[0].Node != "w1" {
		t.Fatalf("PlanScaleDown = %+v, %v", got, err)
	}
}

func TestUtilization(t *testing.T) {
	t.Parallel()
	n := node("w1", "4", "8Gi")
	done := pod("done", "4", on("w1"), func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
	withInit := pod("i", "1", on("w1"), func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: p.Spec.Containers[0].Resources}}
		p.Spec.InitContainers[0].Resources.Requests = p.Spec.InitContainers[0].Resources.Requests.DeepCopy()
		p.Spec.InitContainers[0].Resources.Requests[corev1.ResourceCPU] = p.Spec.Containers[0].Resources.Requests.Cpu().DeepCopy()
	})
	got := Utilization(n, []*corev1.Pod{pod("a", "1", on("w1")), withInit, done, pod("elsewhere", "4", on("w9"))})
	if got != 0.5 {
		t.Errorf("Utilization = %v, want 0.5 (2 of 4 CPU)", got)
	}
}
