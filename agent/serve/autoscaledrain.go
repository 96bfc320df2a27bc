package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/drain"
)

// EvictionDrainer drains through the Eviction API (kubectl's drain
// helper), so every PodDisruptionBudget holds: an eviction a PDB forbids
// gets 429 and is retried until Timeout (k8s.io/kubectl/pkg/drain
// drain.go evictPods), and the drain then fails rather than force.
type EvictionDrainer struct {
	Client  kubernetes.Interface
	Timeout time.Duration
}

// DefaultScaleDownDrainTimeout bounds one scale-down drain, well under the
// runner's DefaultMaxTick.
const DefaultScaleDownDrainTimeout = 5 * time.Minute

var _ NodeDrainer = EvictionDrainer{}

func (d EvictionDrainer) helper(ctx context.Context) *drain.Helper {
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultScaleDownDrainTimeout
	}
	return &drain.Helper{Ctx: ctx, Client: d.Client, GracePeriodSeconds: -1, Timeout: timeout,
		Out: io.Discard, ErrOut: io.Discard}
}

// Drain implements NodeDrainer. It evicts only the pods that must move
// (not DaemonSet, mirror or finished ones), which the autoscale decision
// judged movable; the blocker check after the cordon catches a pod that
// arrived in between.
func (d EvictionDrainer) Drain(ctx context.Context, name string, blocker func([]corev1.Pod) string) error {
	h := d.helper(ctx)
	node, err := d.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if err := drain.RunCordonOrUncordon(h, node, true); err != nil {
		return fmt.Errorf("cordoning: %w", err)
	}
	list, err := d.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + name})
	if err != nil {
		return err
	}
	if b := blocker(list.Items); b != "" {
		return errors.New(b)
	}
	var evict []corev1.Pod
	for _, p := range list.Items {
		if movable(&p) {
			evict = append(evict, p)
		}
	}
	return h.DeleteOrEvictPods(evict)
}

// movable: the pods a drain evicts (autoscale.Blocker's mustMove).
func movable(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil {
		return false
	}
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return false
	}
	c := metav1.GetControllerOf(p)
	return c == nil || c.Kind != "DaemonSet"
}

// Uncordon implements NodeDrainer.
func (d EvictionDrainer) Uncordon(ctx context.Context, name string) error {
	node, err := d.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	return drain.RunCordonOrUncordon(d.helper(ctx), node, false)
}
