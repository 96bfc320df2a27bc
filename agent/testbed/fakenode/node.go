package main

import (
	"context"
	"os"
	"runtime"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// Heartbeat periods: the kubelet's defaults (nodeStatusReportFrequency and
// the lease renewal, 10 s) would do, but a shorter one keeps tests quick.
const (
	statusPeriod = 5 * time.Second
	syncPeriod   = time.Second
)

// apiLoop registers the Node, then keeps its status, its lease, the mirror
// pods of the static pods and the status of the pods bound to it.
func (k *kubelet) apiLoop(ctx context.Context) {
	client, err := k.credentials(ctx)
	if err != nil {
		return
	}
	var node *corev1.Node
	for node == nil {
		if node, err = k.register(ctx, client); err != nil {
			k.logf("registering node %s: %v", k.nodeName, err)
			node = nil
			select {
			case <-ctx.Done():
				return
			case <-time.After(2 * time.Second):
			}
		}
	}
	k.logf("node %s registered", k.nodeName)
	lastStatus := time.Time{}
	for {
		if time.Since(lastStatus) >= statusPeriod {
			if err := k.updateStatus(ctx, client); err != nil {
				k.logf("node status: %v", err)
			} else {
				lastStatus = time.Now()
			}
			if err := k.renewLease(ctx, client, node); err != nil {
				k.logf("node lease: %v", err)
			}
		}
		k.syncPods(ctx, client, node)
		select {
		case <-ctx.Done():
			return
		case <-time.After(syncPeriod):
		}
	}
}

// register creates the Node, or adopts the one a previous run of this
// kubelet created (a restart), and reports it Ready at once.
func (k *kubelet) register(ctx context.Context, c *kubernetes.Clientset) (*corev1.Node, error) {
	want := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: k.nodeName,
			Labels: map[string]string{
				"kubernetes.io/hostname": k.nodeName,
				"kubernetes.io/os":       runtime.GOOS,
				"kubernetes.io/arch":     runtime.GOARCH,
				"beta.kubernetes.io/os":  runtime.GOOS, "beta.kubernetes.io/arch": runtime.GOARCH,
			},
			Annotations: map[string]string{"volumes.kubernetes.io/controller-managed-attach-detach": "true"},
		},
		Spec: corev1.NodeSpec{ProviderID: k.providerID},
	}
	for k, v := range k.labels {
		want.Labels[k] = v
	}
	node, err := c.CoreV1().Nodes().Create(ctx, want, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		node, err = c.CoreV1().Nodes().Get(ctx, k.nodeName, metav1.GetOptions{})
	}
	if err != nil {
		return nil, err
	}
	if err := k.updateStatus(ctx, c); err != nil {
		k.logf("first node status: %v (retried on the next heartbeat)", err)
	}
	return node, nil
}

func (k *kubelet) updateStatus(ctx context.Context, c *kubernetes.Clientset) error {
	node, err := c.CoreV1().Nodes().Get(ctx, k.nodeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	now := metav1.Now()
	hostname, _ := os.Hostname()
	node.Status.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: k.nodeIP.String()},
		{Type: corev1.NodeHostName, Address: hostname},
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("2"),
		corev1.ResourceMemory:           resource.MustParse("4Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("20Gi"),
	}
	node.Status.Capacity, node.Status.Allocatable = capacity, capacity
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		c := corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
		for _, old := range node.Status.Conditions {
			if old.Type == t && old.Status == s {
				c.LastTransitionTime = old.LastTransitionTime
			}
		}
		return c
	}
	node.Status.Conditions = []corev1.NodeCondition{
		cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
		cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
		cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
		cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status (test-bed stand-in)"),
	}
	node.Status.NodeInfo = corev1.NodeSystemInfo{
		KubeletVersion:          k.version,
		ContainerRuntimeVersion: "fakenode://" + k.version,
		OperatingSystem:         runtime.GOOS,
		Architecture:            runtime.GOARCH,
		OSImage:                 "onekube test bed",
		KernelVersion:           kernelRelease(),
	}
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = 10250
	_, err = c.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	return err
}

// renewLease keeps the node's Lease in kube-node-lease, which the node
// lifecycle controller reads as the heartbeat.
func (k *kubelet) renewLease(ctx context.Context, c *kubernetes.Clientset, node *corev1.Node) error {
	leases := c.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	l, err := leases.Get(ctx, k.nodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{
				Name: k.nodeName, Namespace: corev1.NamespaceNodeLease,
				OwnerReferences: []metav1.OwnerReference{nodeOwner(node)},
			},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: ptr.To(k.nodeName), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &now,
			},
		}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	l.Spec.RenewTime = &now
	_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	return err
}

func nodeOwner(node *corev1.Node) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID, Controller: ptr.To(true)}
}

func kernelRelease() string {
	b, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return strings.TrimSpace(string(b))
}
