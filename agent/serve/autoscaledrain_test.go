package serve

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// The drainer cordons, evicts the pods that must move (the Eviction API,
// so PDBs hold), leaves DaemonSet pods, stops on a blocker found after
// the cordon, and Uncordon undoes the cordon.
func TestEvictionDrainer(t *testing.T) {
	t.Parallel()
	web := asPod("web", "w11", "100m", false)
	ds := asPod("ds", "w11", "10m", false)
	ds.OwnerReferences[0].Kind = "DaemonSet"
	cs := fake.NewClientset(asNode("w11", 11, "4"), web, ds)
	// kubectl's drain looks the Eviction subresource up in discovery.
	cs.Resources = []*metav1.APIResourceList{{GroupVersion: "v1", APIResources: []metav1.APIResource{
		{Name: "pods/eviction", Kind: "Eviction", Group: "policy", Version: "v1"}}}}
	var evicted []string
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		name := a.(k8stesting.CreateAction).GetObject().(metav1.Object).GetName()
		evicted = append(evicted, name)
		return true, nil, cs.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), "default", name)
	})
	d := EvictionDrainer{Client: cs, Timeout: 10 * time.Second}
	ctx := context.Background()
	if err := d.Drain(ctx, "w11", func([]corev1.Pod) string { return "pod default/x not managed by a controller" }); err == nil {
		t.Fatal("a blocker found after the cordon did not stop the drain")
	}
	if len(evicted) != 0 {
		t.Fatalf("evicted %v despite the blocker", evicted)
	}
	if err := d.Drain(ctx, "w11", func([]corev1.Pod) string { return "" }); err != nil {
		t.Fatal(err)
	}
	if len(evicted) != 1 || evicted[0] != "web" {
		t.Fatalf("evicted %v, want [web]", evicted)
	}
	n, _ := cs.CoreV1().Nodes().Get(ctx, "w11", metav1.GetOptions{})
	if !n.Spec.Unschedulable {
		t.Fatal("not cordoned")
	}
	if err := d.Uncordon(ctx, "w11"); err != nil {
		t.Fatal(err)
	}
	if n, _ = cs.CoreV1().Nodes().Get(ctx, "w11", metav1.GetOptions{}); n.Spec.Unschedulable {
		t.Fatal("still cordoned")
	}
}
