package autoscale

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Pod annotations the cluster-autoscaler reads, honoured here with the
// same meaning (cluster-autoscaler/FAQ.md, "What types of pods can prevent
// CA from removing a node?" and "How can I prevent Cluster Autoscaler from
// scaling down a particular node?").
const (
	AnnotationSafeToEvict      = "cluster-autoscaler.kubernetes.io/safe-to-evict"
	AnnotationScaleDownDisable = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
	annotationMirror           = corev1.MirrorPodAnnotationKey
)

// Blocker says why pod keeps its node from being removed, or "" when it
// does not. It follows the cluster-autoscaler's drainability rules
// (FAQ.md, "What types of pods can prevent CA from removing a node?";
// simulator/drainability/rules): a pod blocks when it has no controller,
// uses local storage (hostPath, or an emptyDir not in memory), runs in
// kube-system (outside a DaemonSet) with no PodDisruptionBudget, is
// annotated safe-to-evict=false, or a PDB covering it allows no
// disruption. safe-to-evict=true lifts the first three. Pods that need no
// move (DaemonSet, mirror, finished or already terminating) never block;
// Movers lists the others.
func Blocker(p *corev1.Pod, pdbs []policyv1.PodDisruptionBudget) string {
	if !mustMove(p) {
		return ""
	}
	safe := p.Annotations[AnnotationSafeToEvict]
	if safe == "false" {
		return "annotated " + AnnotationSafeToEvict + "=false"
	}
	covering := coveringPDBs(p, pdbs)
	for _, b := range covering {
		if b.Status.DisruptionsAllowed < 1 {
			return fmt.Sprintf("PodDisruptionBudget %s allows no disruption", b.Name)
		}
	}
	if safe == "true" {
		return ""
	}
	if metav1.GetControllerOf(p) == nil {
		return "not managed by a controller"
	}
	for _, v := range p.Spec.Volumes {
		if v.HostPath != nil || (v.EmptyDir != nil && v.EmptyDir.Medium != corev1.StorageMediumMemory) {
			return "uses local storage (volume " + v.Name + ")"
		}
	}
	if p.Namespace == metav1.NamespaceSystem && len(covering) == 0 {
		return "a kube-system pod with no PodDisruptionBudget"
	}
	return ""
}

// mustMove: the pods a node's removal would have to place elsewhere.
func mustMove(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil {
		return false
	}
	if _, mirror := p.Annotations[annotationMirror]; mirror {
		return false
	}
	if c := metav1.GetControllerOf(p); c != nil && c.Kind == "DaemonSet" {
		return false
	}
	return true
}

func coveringPDBs(p *corev1.Pod, pdbs []policyv1.PodDisruptionBudget) []policyv1.PodDisruptionBudget {
	var out []policyv1.PodDisruptionBudget
	for _, b := range pdbs {
		if b.Namespace != p.Namespace || b.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err != nil || sel.Empty() {
			// An empty selector matches no pod in policy/v1
			// (k8s.io/api/policy/v1 PodDisruptionBudgetSpec.Selector).
			continue
		}
		if sel.Matches(labels.Set(p.Labels)) {
			out = append(out, b)
		}
	}
	return out
}

// Utilization is the larger of the node's CPU and memory requests over
// its allocatable, counting every pod on it, as the cluster-autoscaler's
// default (simulator/utilization/info.go).
func Utilization(node *corev1.Node, pods []*corev1.Pod) float64 {
	var cpu, mem int64
	for _, p := range pods {
		if p.Spec.NodeName != node.Name || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		r := podRequests(p)
		cpu += r.Cpu().MilliValue()
		mem += r.Memory().Value()
	}
	u := 0.0
	if a := node.Status.Allocatable.Cpu().MilliValue(); a > 0 {
		u = float64(cpu) / float64(a)
	}
	if a := node.Status.Allocatable.Memory().Value(); a > 0 {
		u = max(u, float64(mem)/float64(a))
	}
	return u
}

// podRequests sums the containers' requests, with init containers and
// overhead as the scheduler counts them.
func podRequests(p *corev1.Pod) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, c := range p.Spec.Containers {
		for k, v := range c.Resources.Requests {
			q := out[k]
			q.Add(v)
			out[k] = q
		}
	}
	for _, c := range p.Spec.InitContainers {
		for k, v := range c.Resources.Requests {
			if q, ok := out[k]; !ok || v.Cmp(q) > 0 {
				out[k] = v.DeepCopy()
			}
		}
	}
	for k, v := range p.Spec.Overhead {
		q := out[k]
		q.Add(v)
		out[k] = q
	}
	return out
}

// Removal is the verdict on one node as a scale-down candidate.
type Removal struct {
	Node        string
	Utilization float64
	// Removable: under-used, every pod that must move may move, and all
	// of them fit on the other nodes.
	Removable bool
	// Reason says why not, when not.
	Reason string
}

// ScaleDownInput is the cluster a scale-down is judged on.
type ScaleDownInput struct {
	Nodes []*corev1.Node
	Pods  []*corev1.Pod
	PDBs  []policyv1.PodDisruptionBudget
	// Candidates are the nodes that may be removed (workers of the role,
	// never the oldest by default); the others are only destinations.
	Candidates []string
	// Threshold is the utilization under which a node is under-used.
	Threshold float64
}

// PlanScaleDown judges every candidate on its own, against the cluster as
// it is: could it go now, its pods placed on the other nodes by the
// scheduler's filters?
func PlanScaleDown(in ScaleDownInput) ([]Removal, error) {
	byName := map[string]*corev1.Node{}
	for _, n := range in.Nodes {
		byName[n.Name] = n
	}
	var out []Removal
	for _, name := range in.Candidates {
		n := byName[name]
		if n == nil {
			continue
		}
		r, err := judge(in, n)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func judge(in ScaleDownInput, n *corev1.Node) (Removal, error) {
	r := Removal{Node: n.Name, Utilization: Utilization(n, in.Pods)}
	switch {
	case n.Annotations[AnnotationScaleDownDisable] == "true":
		r.Reason = "annotated " + AnnotationScaleDownDisable + "=true"
		return r, nil
	case r.Utilization >= in.Threshold:
		r.Reason = fmt.Sprintf("requests at %.0f%% of allocatable, not below %.0f%%", 100*r.Utilization, 100*in.Threshold)
		return r, nil
	}
	var movers []*corev1.Pod
	budget := map[string]int32{} // disruptions the node's pods take from each PDB
	for _, p := range in.Pods {
		if p.Spec.NodeName != n.Name {
			continue
		}
		if b := Blocker(p, in.PDBs); b != "" {
			r.Reason = "pod " + p.Namespace + "/" + p.Name + " " + b
			return r, nil
		}
		if !mustMove(p) {
			continue
		}
		movers = append(movers, p)
		for _, b := range coveringPDBs(p, in.PDBs) {
			key := b.Namespace + "/" + b.Name
			if budget[key]++; budget[key] > b.Status.DisruptionsAllowed {
				r.Reason = fmt.Sprintf("PodDisruptionBudget %s allows %d disruptions, the node's pods need more", key, b.Status.DisruptionsAllowed)
				return r, nil
			}
		}
	}
	sim, err := NewSim(in.Nodes, in.Pods)
	if err != nil {
		return r, err
	}
	sim.RemoveNode(n.Name)
	dest := sim.Nodes()
	for _, p := range movers {
		moved := p.DeepCopy()
		moved.Spec.NodeName = ""
		to := sim.FirstFit(moved, dest)
		if to == "" {
			r.Reason = "pod " + p.Namespace + "/" + p.Name + " fits no other node"
			return r, nil
		}
		sim.Bind(moved, to)
	}
	r.Removable = true
	return r, nil
}
