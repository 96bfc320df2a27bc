package autoscale

import (
	"fmt"
	"maps"
	"runtime"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Template is a worker as it would register once OneFlow created it: what
// the scheduler would see of a Node that does not exist yet (the
// cluster-autoscaler's TemplateNodeInfo).
type Template struct {
	Allocatable corev1.ResourceList
	Labels      map[string]string
	Taints      []corev1.Taint
}

// Node is the template as a Node named name.
func (t Template) Node(name string) *corev1.Node {
	labels := maps.Clone(t.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[corev1.LabelHostname] = name
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: append([]corev1.Taint(nil), t.Taints...)},
		Status: corev1.NodeStatus{
			Capacity:    t.Allocatable.DeepCopy(),
			Allocatable: t.Allocatable.DeepCopy(),
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
}

// TemplateFromNode makes a template of a running worker, as the
// cluster-autoscaler does for a node group that has nodes (it copies a
// real node and sanitizes it: simulator/node_info_utils.go). Only what
// every new worker shares is kept: the node's own name, VM ID label and
// the taints the node lifecycle or an autoscaler put on one node are
// dropped, and the node is schedulable.
func TemplateFromNode(n *corev1.Node) Template {
	t := Template{Allocatable: n.Status.Allocatable.DeepCopy(), Labels: map[string]string{}}
	for k, v := range n.Labels {
		switch k {
		case corev1.LabelHostname, labelVMID:
			continue
		}
		t.Labels[k] = v
	}
	for _, taint := range n.Spec.Taints {
		if transientTaint(taint.Key) {
			continue
		}
		t.Taints = append(t.Taints, taint)
	}
	return t
}

// transientTaint: taints the node controller, the kubelet or an
// autoscaler put on one node for a while (k8s.io/api/core/v1
// well_known_taints.go; the cluster-autoscaler's ToBeDeleted and
// DeletionCandidate taints).
func transientTaint(key string) bool {
	return strings.HasPrefix(key, "node.kubernetes.io/") ||
		strings.HasPrefix(key, "node.cloudprovider.kubernetes.io/") ||
		key == "ToBeDeletedByClusterAutoscaler" || key == "DeletionCandidateOfClusterAutoscaler"
}

// labelVMID is agent/kubeadm's LabelVMID (every node registers with it;
// importing agent/kubeadm would pull kubeadm's API types in here).
const labelVMID = "onekube.io/vm-id"

// Kubelet defaults a kubeadm worker gets (onekube sets no reservations):
// maxPods 110 and the hard eviction threshold memory.available<100Mi,
// which allocatable subtracts (k8s.io/kubernetes pkg/kubelet/apis/config/
// v1beta1/defaults.go, pkg/kubelet/eviction/defaults_linux.go).
const (
	kubeletMaxPods     = 110
	kubeletEvictionMiB = 100
	// The guest kernel keeps part of MEMORY from MemTotal (its own code,
	// the crash kernel); 5 % is a conservative share for the sizes a
	// worker has, so the template promises no more than the VM gives.
	kernelShare = 0.05
)

// TemplateFromVM makes a template of the worker role's VM size, for a role
// with no Node to copy (scale from zero). A worker registers with the
// labels the kubelet sets itself and onekube's VM ID label, and no taints:
// agent/kubeadm renders a worker's JoinConfiguration without any
// (render_v1beta4.go, taints(false) only for a control plane).
func TemplateFromVM(vcpu, memoryMB int) (Template, error) {
	if vcpu < 1 || memoryMB < 256 {
		return Template{}, fmt.Errorf("autoscale: a worker of %d VCPU and %d MB is no template", vcpu, memoryMB)
	}
	mem := int64(float64(memoryMB)*(1-kernelShare)) - kubeletEvictionMiB
	return Template{
		Allocatable: corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewQuantity(int64(vcpu), resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(mem<<20, resource.BinarySI),
			corev1.ResourcePods:   *resource.NewQuantity(kubeletMaxPods, resource.DecimalSI),
		},
		Labels: map[string]string{
			corev1.LabelOSStable:   "linux",
			corev1.LabelArchStable: runtime.GOARCH,
		},
	}, nil
}
