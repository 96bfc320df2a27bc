package autoscale

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
)

// Sim is a scheduling simulation: a set of nodes with the pods bound to
// them, which pods can be tried against, added to and taken from. A Sim is
// not safe for concurrent use.
type Sim struct {
	fw    framework.Framework
	world *world
	log   klog.Logger
}

// NewSim builds a simulation over nodes and the pods running on them (pods
// whose spec.nodeName names none of the nodes are left out).
func NewSim(nodes []*corev1.Node, pods []*corev1.Pod) (*Sim, error) {
	w := &world{byName: map[string]*framework.NodeInfo{}}
	for _, n := range nodes {
		w.add(n)
	}
	for _, p := range pods {
		if ni := w.byName[p.Spec.NodeName]; ni != nil && p.Spec.NodeName != "" {
			ni.AddPod(p)
		}
	}
	// The framework counts plugin calls in the scheduler's metrics, which
	// must exist first (Register runs once).
	schedmetrics.Register()
	ctx := context.Background()
	// InterPodAffinity lists Namespaces for namespaceSelector terms; the
	// factory is never started, so such a term matches no namespace.
	inf := informers.NewSharedInformerFactory(nil, 0)
	fw, err := frameworkruntime.NewFramework(ctx, registry(), profile(),
		frameworkruntime.WithSnapshotSharedLister(w),
		frameworkruntime.WithInformerFactory(inf),
		frameworkruntime.WithLogger(klog.Background()))
	if err != nil {
		return nil, fmt.Errorf("autoscale: building the scheduler framework: %w", err)
	}
	return &Sim{fw: fw, world: w, log: klog.Background()}, nil
}

// Fits reports whether the scheduler's filters would place pod on the
// named node as the simulation stands, and if not, why.
func (s *Sim) Fits(pod *corev1.Pod, node string) (bool, string) {
	got, why := s.fits(pod, []string{node})
	return got != "", why
}

// FirstFit is the first node, in the order given, that pod fits on; "" if
// none.
func (s *Sim) FirstFit(pod *corev1.Pod, nodes []string) string {
	got, _ := s.fits(pod, nodes)
	return got
}

// fits runs one scheduling cycle's PreFilter, then Filter on the nodes,
// as kube-scheduler's findNodesThatFit does (pkg/scheduler/
// schedule_one.go); the first node that passes wins.
func (s *Sim) fits(pod *corev1.Pod, nodes []string) (string, string) {
	ctx := context.Background()
	state := framework.NewCycleState()
	res, st, _ := s.fw.RunPreFilterPlugins(ctx, state, pod)
	if !st.IsSuccess() {
		return "", st.Message()
	}
	why := "no such node"
	for _, node := range nodes {
		ni := s.world.byName[node]
		switch {
		case ni == nil:
			continue
		case !res.AllNodes() && !res.NodeNames.Has(node):
			why = "excluded by PreFilter"
			continue
		}
		if st := s.fw.RunFilterPlugins(ctx, state, pod, ni); !st.IsSuccess() {
			why = st.Message()
			continue
		}
		return node, ""
	}
	return "", why
}

// Bind places pod on node in the simulation (no check).
func (s *Sim) Bind(pod *corev1.Pod, node string) {
	p := pod.DeepCopy()
	p.Spec.NodeName = node
	s.world.byName[node].AddPod(p)
}

// AddNode adds an empty node to the simulation.
func (s *Sim) AddNode(n *corev1.Node) { s.world.add(n) }

// RemoveNode takes a node, and the pods on it, out of the simulation.
func (s *Sim) RemoveNode(name string) {
	delete(s.world.byName, name)
	s.world.order = slices.DeleteFunc(s.world.order, func(n string) bool { return n == name })
}

// Unbind takes pod off its node in the simulation.
func (s *Sim) Unbind(pod *corev1.Pod) error {
	ni := s.world.byName[pod.Spec.NodeName]
	if ni == nil {
		return errors.New("no such node")
	}
	return ni.RemovePod(s.log, pod)
}

// Nodes lists the simulation's node names in the order they were added.
func (s *Sim) Nodes() []string { return slices.Clone(s.world.order) }

// world is the simulation's node set, as the plugins read it through the
// framework's SharedLister. Unlike the scheduler's own Snapshot it changes
// as the simulation binds pods and adds nodes.
type world struct {
	byName map[string]*framework.NodeInfo
	order  []string
}

func (w *world) add(n *corev1.Node) {
	ni := framework.NewNodeInfo()
	ni.SetNode(n)
	if _, dup := w.byName[n.Name]; !dup {
		w.order = append(w.order, n.Name)
	}
	w.byName[n.Name] = ni
}

func (w *world) list(keep func(*framework.NodeInfo) bool) []fwk.NodeInfo {
	out := make([]fwk.NodeInfo, 0, len(w.order))
	for _, n := range w.order {
		if ni := w.byName[n]; keep == nil || keep(ni) {
			out = append(out, ni)
		}
	}
	return out
}

func (w *world) NodeInfos() fwk.NodeInfoLister       { return w }
func (w *world) StorageInfos() fwk.StorageInfoLister { return w }

// The pod-group listers serve the gang-scheduling plugins, which the
// simulation does not run.
func (w *world) PodGroupStates() fwk.PodGroupStateLister                   { return nil }
func (w *world) PodGroups() fwk.PodGroupLister                             { return nil }
func (w *world) CompositePodGroupStates() fwk.CompositePodGroupStateLister { return nil }
func (w *world) CompositePodGroups() fwk.CompositePodGroupLister           { return nil }

func (w *world) List() ([]fwk.NodeInfo, error) { return w.list(nil), nil }
func (w *world) HavePodsWithAffinityList() ([]fwk.NodeInfo, error) {
	return w.list(func(ni *framework.NodeInfo) bool { return len(ni.PodsWithAffinity) > 0 }), nil
}
func (w *world) HavePodsWithRequiredAntiAffinityList() ([]fwk.NodeInfo, error) {
	return w.list(func(ni *framework.NodeInfo) bool { return len(ni.PodsWithRequiredAntiAffinity) > 0 }), nil
}
func (w *world) HavePodsWithRequiredNonHostScopedAntiAffinityList() ([]fwk.NodeInfo, error) {
	return w.list(func(ni *framework.NodeInfo) bool { return len(ni.PodsWithRequiredNonHostScopedAntiAffinity) > 0 }), nil
}
func (w *world) Get(name string) (fwk.NodeInfo, error) {
	if ni := w.byName[name]; ni != nil {
		return ni, nil
	}
	return nil, fmt.Errorf("node %q not in the simulation", name)
}
func (w *world) IsPVCUsedByPods(string) bool { return false }
