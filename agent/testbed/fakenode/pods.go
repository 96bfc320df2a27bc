package main

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// Annotations of a mirror pod (k8s.io/kubernetes/pkg/kubelet/types).
const (
	annConfigMirror = "kubernetes.io/config.mirror"
	annConfigHash   = "kubernetes.io/config.hash"
	annConfigSource = "kubernetes.io/config.source"
	annConfigSeen   = "kubernetes.io/config.seen"
)

// syncPods mirrors the running static pods into the API server, removes
// mirrors of pods that are gone or changed, and plays the status of every
// other pod bound to this node: Running (Succeeded for a Job's pod), and
// deletion confirmed at once, as a kubelet that stopped the containers would.
func (k *kubelet) syncPods(ctx context.Context, c *kubernetes.Clientset, node *corev1.Node) {
	pods := c.CoreV1().Pods("")
	// A node may only list the pods bound to it; a GET of a pod that does
	// not exist yet is denied by the Node authorizer.
	list, err := pods.List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", k.nodeName).String()})
	if err != nil {
		k.logf("listing pods: %v", err)
		return
	}
	mirrors := map[string]*corev1.Pod{}
	for i := range list.Items {
		p := &list.Items[i]
		if _, ok := p.Annotations[annConfigMirror]; ok {
			mirrors[p.Namespace+"/"+p.Name] = p
			continue
		}
		k.playPod(ctx, c, p)
	}
	running := map[string]bool{}
	for _, sb := range k.rt.list() {
		if !sb.ready {
			continue
		}
		key := sb.pod.Namespace + "/" + sb.pod.Name
		running[key] = true
		m := mirrors[key]
		if m != nil && m.Annotations[annConfigMirror] != sb.hash {
			k.deleteNow(ctx, c, m)
			m = nil
		}
		if m == nil {
			if m, err = k.createMirror(ctx, c, node, sb); err != nil {
				k.logf("mirror pod %s: %v", key, err)
				continue
			}
		}
		if k.rt.running(sb) && m.Status.Phase != corev1.PodRunning {
			k.setRunning(ctx, c, m, sb)
		}
	}
	for key, m := range mirrors {
		if !running[key] {
			k.deleteNow(ctx, c, m)
		}
	}
}

func (k *kubelet) createMirror(ctx context.Context, c *kubernetes.Clientset, node *corev1.Node, sb *sandbox) (*corev1.Pod, error) {
	m := sb.pod.DeepCopy()
	m.UID, m.ResourceVersion = "", ""
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[annConfigMirror] = sb.hash
	m.Annotations[annConfigHash] = sb.hash
	m.Annotations[annConfigSource] = "file"
	m.Annotations[annConfigSeen] = sb.created.UTC().Format(time.RFC3339Nano)
	// NodeRestriction admits a mirror pod only when its node owns it.
	m.OwnerReferences = []metav1.OwnerReference{nodeOwner(node)}
	m.Status = corev1.PodStatus{}
	return c.CoreV1().Pods(m.Namespace).Create(ctx, m, metav1.CreateOptions{})
}

// setRunning reports a pod Running and Ready, its containers started now.
func (k *kubelet) setRunning(ctx context.Context, c *kubernetes.Clientset, p *corev1.Pod, sb *sandbox) {
	now := metav1.Now()
	p.Status.Phase = corev1.PodRunning
	p.Status.HostIP = k.nodeIP.String()
	p.Status.HostIPs = []corev1.HostIP{{IP: k.nodeIP.String()}}
	if p.Spec.HostNetwork {
		p.Status.PodIP = k.nodeIP.String()
		p.Status.PodIPs = []corev1.PodIP{{IP: k.nodeIP.String()}}
	}
	p.Status.StartTime = &now
	p.Status.Conditions = conditions(now, corev1.ConditionTrue)
	p.Status.ContainerStatuses = nil
	for _, ct := range p.Spec.Containers {
		id := "fakenode://" + newID()
		if sb != nil {
			for _, sc := range sb.containers {
				if sc.name == ct.Name {
					id = "fakenode://" + sc.id
				}
			}
		}
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: ct.Name, Image: ct.Image, ImageID: "sha256:" + digest(ct.Image), ContainerID: id,
			Ready: true, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	if _, err := c.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
		k.logf("pod %s/%s status: %v", p.Namespace, p.Name, err)
	}
}

// playPod gives an ordinary pod the status a kubelet would report without
// running it: its containers are never executed.
func (k *kubelet) playPod(ctx context.Context, c *kubernetes.Clientset, p *corev1.Pod) {
	if p.DeletionTimestamp != nil {
		k.deleteNow(ctx, c, p)
		return
	}
	if p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return
	}
	for _, o := range p.OwnerReferences {
		if o.Kind == "Job" {
			now := metav1.Now()
			p.Status.Phase = corev1.PodSucceeded
			p.Status.HostIP = k.nodeIP.String()
			p.Status.StartTime = &now
			p.Status.Conditions = conditions(now, corev1.ConditionFalse)
			p.Status.ContainerStatuses = nil
			for _, ct := range p.Spec.Containers {
				p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
					Name: ct.Name, Image: ct.Image, ImageID: "sha256:" + digest(ct.Image),
					State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}},
				})
			}
			if _, err := c.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
				k.logf("pod %s/%s status: %v", p.Namespace, p.Name, err)
			}
			return
		}
	}
	k.setRunning(ctx, c, p, nil)
}

// deleteNow deletes with grace 0: without a kubelet confirming, a graceful
// delete leaves the pod Terminating for ever (reference §4 gotchas).
func (k *kubelet) deleteNow(ctx context.Context, c *kubernetes.Clientset, p *corev1.Pod) {
	err := c.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      &metav1.Preconditions{UID: &p.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		k.logf("deleting pod %s/%s: %v", p.Namespace, p.Name, err)
	}
}

func conditions(now metav1.Time, ready corev1.ConditionStatus) []corev1.PodCondition {
	return []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: ready, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: ready, LastTransitionTime: now},
	}
}
