package autoscale

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Unschedulable reports whether the scheduler gave up on pod for now:
// Pending, not bound, with PodScheduled=False reason Unschedulable. That is
// the cluster-autoscaler's signal (utils/kubernetes/listers.go,
// unschedulablePods); a pod merely waiting for its first attempt, or gated
// (reason SchedulingGated), is no reason to add a node.
func Unschedulable(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodPending || p.Spec.NodeName != "" || p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
		}
	}
	return false
}

// ScaleUp is a scale-up decision: how many workers to add and what each
// unschedulable pod counted for. Pods are named namespace/name.
type ScaleUp struct {
	// New is how many workers to add (0: none).
	New int
	// Helped are the pods that would schedule on the new workers.
	Helped []string
	// FitsNow are pods that fit an existing node as the simulation stands
	// (the scheduler will place them, or a node is on its way): no
	// reason to scale.
	FitsNow []string
	// NoTemplate are pods that would not fit even on an empty new
	// worker: no reason to scale.
	NoTemplate []string
	// OverMax are pods that would need more workers than room allows.
	OverMax []string
}

// PlanScaleUp decides how many workers of template tmpl the pending pods
// need, adding at most room. sim holds the cluster as it is; the pods are
// bound in it as the plan goes (first fit, in the order given), so pending
// pods share the new workers, and anti-affinity or topology spread between
// them is honoured.
func PlanScaleUp(sim *Sim, pending []*corev1.Pod, tmpl Template, room int) ScaleUp {
	var out ScaleUp
	existing := sim.Nodes()
	var added []string
	for _, p := range pending {
		id := p.Namespace + "/" + p.Name
		if n := sim.FirstFit(p, existing); n != "" {
			sim.Bind(p, n)
			out.FitsNow = append(out.FitsNow, id)
			continue
		}
		if n := sim.FirstFit(p, added); n != "" {
			sim.Bind(p, n)
			out.Helped = append(out.Helped, id)
			continue
		}
		name := fmt.Sprintf("onekube-autoscale-template-%d", len(added)+1)
		sim.AddNode(tmpl.Node(name))
		if ok, _ := sim.Fits(p, name); !ok {
			sim.RemoveNode(name)
			out.NoTemplate = append(out.NoTemplate, id)
			continue
		}
		if len(added) >= room {
			sim.RemoveNode(name)
			out.OverMax = append(out.OverMax, id)
			continue
		}
		added = append(added, name)
		sim.Bind(p, name)
		out.Helped = append(out.Helped, id)
	}
	out.New = len(added)
	return out
}
