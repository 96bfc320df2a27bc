package autoscale

import (
	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/interpodaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeports"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeunschedulable"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/podtopologyspread"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/tainttoleration"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// filters are the scheduler plugins the simulation runs, at PreFilter and
// Filter: the default profile's filters that read only the pod and the
// nodes (pkg/scheduler/apis/config/v1/default_plugins.go). The volume, DRA
// and gang plugins need informers and objects this simulation does not
// keep, so a pod that depends on them is judged on the rest.
var filters = []string{
	names.NodeUnschedulable,
	names.NodeResourcesFit,
	names.NodePorts,
	names.NodeAffinity,
	names.TaintToleration,
	names.InterPodAffinity,
	names.PodTopologySpread,
}

// registry holds only the plugins the profile names. The scheduler's
// NewInTreeRegistry would link every in-tree plugin (volume binding, DRA,
// CSI translation) into onekubed for nothing.
func registry() frameworkruntime.Registry {
	fts := plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	return frameworkruntime.Registry{
		names.NodeUnschedulable: frameworkruntime.FactoryAdapter(fts, nodeunschedulable.New),
		names.NodeResourcesFit:  frameworkruntime.FactoryAdapter(fts, noderesources.NewFit),
		names.NodePorts:         frameworkruntime.FactoryAdapter(fts, nodeports.New),
		names.NodeAffinity:      frameworkruntime.FactoryAdapter(fts, nodeaffinity.New),
		names.TaintToleration:   frameworkruntime.FactoryAdapter(fts, tainttoleration.New),
		names.InterPodAffinity:  frameworkruntime.FactoryAdapter(fts, interpodaffinity.New),
		names.PodTopologySpread: frameworkruntime.FactoryAdapter(fts, podtopologyspread.New),
		names.PrioritySort:      queuesort.New,
		names.DefaultBinder:     defaultbinder.New,
	}
}

// profile is the scheduler profile of the simulation, with the plugin
// arguments kube-scheduler defaults to (pkg/scheduler/apis/config/v1/
// defaults.go), spelled out so the scheduler's configuration scheme stays
// out of the binary.
func profile() *config.KubeSchedulerProfile {
	set := func(ns ...string) config.PluginSet {
		var s config.PluginSet
		for _, n := range ns {
			s.Enabled = append(s.Enabled, config.Plugin{Name: n})
		}
		return s
	}
	return &config.KubeSchedulerProfile{
		SchedulerName: v1.DefaultSchedulerName,
		Plugins: &config.Plugins{
			QueueSort: set(names.PrioritySort),
			PreFilter: set(filters...),
			Filter:    set(filters...),
			Bind:      set(names.DefaultBinder),
		},
		PluginConfig: []config.PluginConfig{
			{Name: names.NodeResourcesFit, Args: &config.NodeResourcesFitArgs{ScoringStrategy: &config.ScoringStrategy{
				Type: config.LeastAllocated,
				Resources: []config.ResourceSpec{
					{Name: string(v1.ResourceCPU), Weight: 1}, {Name: string(v1.ResourceMemory), Weight: 1}},
			}}},
			{Name: names.NodeAffinity, Args: &config.NodeAffinityArgs{}},
			{Name: names.InterPodAffinity, Args: &config.InterPodAffinityArgs{HardPodAffinityWeight: 1}},
			// The System defaulting adds only ScheduleAnyway constraints
			// (podtopologyspread/plugin.go systemDefaultConstraints),
			// which Filter ignores; List with none needs no Service
			// informers.
			{Name: names.PodTopologySpread, Args: &config.PodTopologySpreadArgs{DefaultingType: config.ListDefaulting}},
		},
	}
}
