package leave

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	policyv1client "k8s.io/client-go/kubernetes/typed/policy/v1"
)

// drainClient adapts a node's credential to pkg/drain, for two things
// measured on the real API server (leave_test.go):
//
//   - An eviction a PodDisruptionBudget refuses gets 429 with Retry-After,
//     and client-go's typed Evict retries that itself, 10 times (1m40s),
//     inside one call: drain's own retry loop and its messages never run.
//     Evictions here are sent with no client retries, so the 429 reaches
//     drain at once, which waits EvictErrorRetryDelay and tries again
//     under the overall deadline.
//   - Once an evicted pod is gone, the Node authorizer no longer relates
//     it to this node and answers 403 ("no relationship found") instead of
//     404, which drain takes for a failure. For a pod this node listed as
//     its own, that answer means the pod left (spec.nodeName is
//     immutable), so it reads as NotFound.
type drainClient struct{ kubernetes.Interface }

func (c drainClient) CoreV1() corev1client.CoreV1Interface {
	return coreV1{c.Interface.CoreV1()}
}

func (c drainClient) PolicyV1() policyv1client.PolicyV1Interface {
	return policyV1{c.Interface.PolicyV1()}
}

type coreV1 struct{ corev1client.CoreV1Interface }

func (c coreV1) Pods(ns string) corev1client.PodInterface {
	return pods{c.CoreV1Interface.Pods(ns), ns}
}

type pods struct {
	corev1client.PodInterface
	ns string
}

func (p pods) Get(ctx context.Context, name string, o metav1.GetOptions) (*corev1.Pod, error) {
	pod, err := p.PodInterface.Get(ctx, name, o)
	if err != nil && apierrors.IsForbidden(err) && strings.Contains(err.Error(), "no relationship found between node") {
		return nil, apierrors.NewNotFound(corev1.Resource("pods"), name)
	}
	return pod, err
}

type policyV1 struct {
	policyv1client.PolicyV1Interface
}

func (p policyV1) Evictions(ns string) policyv1client.EvictionInterface {
	return evictions{p.PolicyV1Interface.Evictions(ns), p.PolicyV1Interface, ns}
}

type evictions struct {
	policyv1client.EvictionInterface
	policy policyv1client.PolicyV1Interface
	ns     string
}

// Evict posts the eviction once, with no client-side retries.
func (e evictions) Evict(ctx context.Context, ev *policyv1.Eviction) error {
	ns := ev.Namespace
	if ns == "" {
		ns = e.ns
	}
	return e.policy.RESTClient().Post().
		AbsPath("/api/v1").
		Namespace(ns).
		Resource("pods").
		Name(ev.Name).
		SubResource("eviction").
		MaxRetries(0).
		Body(ev).
		Do(ctx).
		Error()
}
