package serve

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// An eviction a PodDisruptionBudget refuses (429) is retried after a
// delay, as kubectl drain does, not at once: the bed's first run logged
// one refused eviction per API round trip (~200 ms) for the whole drain.
func TestKubectlDrainerWaitsBetweenRefusedEvictions(t *testing.T) {
	owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "u1", Controller: ptrTrue()}
	cs := fake.NewClientset(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w1"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1-a", Namespace: "default", OwnerReferences: []metav1.OwnerReference{owner}},
			Spec: corev1.PodSpec{NodeName: "w1"}},
	)
	var evictions atomic.Int32
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		evictions.Add(1)
		return true, nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	})
	cs.Resources = append(cs.Resources, &metav1.APIResourceList{GroupVersion: "v1",
		APIResources: []metav1.APIResource{{Name: "pods/eviction", Kind: "Eviction", Group: "policy", Version: "v1"}}})
	d := KubectlDrainer{Client: cs, Timeout: time.Second, RetryDelay: 300 * time.Millisecond}
	err := d.Drain(context.Background(), "w1")
	if err == nil || !strings.Contains(err.Error(), "not drained within") {
		t.Errorf("Drain = %v, want a timeout", err)
	}
	if n := evictions.Load(); n < 1 || n > 5 {
		t.Errorf("%d evictions in a 1 s drain retried every 300 ms, want 1..5", n)
	}
	if got := (KubectlDrainer{Client: cs}).helper(context.Background()).EvictErrorRetryDelay; got != DefaultEvictRetryDelay {
		t.Errorf("default retry delay %s, want %s (kubectl drain's)", got, DefaultEvictRetryDelay)
	}
}

func ptrTrue() *bool { b := true; return &b }
