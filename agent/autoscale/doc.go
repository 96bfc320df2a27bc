// Package autoscale decides how the worker role should change size, the
// way the cluster-autoscaler decides (shared/reference/day2-upgrades-
// healing-scaling.md §3): not on a metric threshold but by simulating the
// Kubernetes scheduler. Scale-up asks whether pods the scheduler found
// unschedulable would fit on a new worker built from the role's template;
// scale-down asks whether an under-used worker's pods would all fit on the
// other nodes. The simulation runs the scheduler's own filter plugins from
// k8s.io/kubernetes (pkg/scheduler/framework/plugins), so a decision here
// agrees with what kube-scheduler will do once the node exists.
//
// Everything here is pure: the serve loop (agent/serve/autoscale.go) reads
// the world, calls these functions and acts on their answers.
package autoscale
