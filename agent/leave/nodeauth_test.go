package leave

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/onekube/onekube/agent/testbed/loopback"
)

// What a node's own credential may do under the Node authorizer and
// NodeRestriction, on the real API server: the facts leave is built on
// (docs/architecture.md §5). It may cordon itself but not another node,
// list and evict its own pods but not another node's, not read a
// DaemonSet, not delete its Node (without serve's grant); and once its
// evicted pod is gone, reading it is 403, not 404.
func TestNodeCredentialFacts(t *testing.T) {
	s := loopback.Start(t, loopback.Options{})
	w := world{t: t, admin: s.Client(t), s: s}
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "default"}}
	if _, err := w.admin.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	w.node("worker-1")
	w.node("worker-2")
	w.pod("mine", "worker-1", nil, nil)
	w.pod("theirs", "worker-2", nil, nil)
	node := w.nodeClient("worker-1")
	cordon := []byte(`{"spec":{"unschedulable":true}}`)
	deadline := time.Now().Add(10 * time.Second)
	var err error
	for { // the Node authorizer's graph follows the pods within a moment
		_, err = node.CoreV1().Pods("default").Get(ctx, "mine", metav1.GetOptions{})
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("reading its own pod: %v", err)
	}
	checks := []struct {
		what      string
		err       error
		forbidden bool
	}{
		{what: "cordon itself", err: patchErr(node.CoreV1().Nodes().Patch(ctx, "worker-1", types.MergePatchType, cordon, metav1.PatchOptions{}))},
		{what: "cordon another node", err: patchErr(node.CoreV1().Nodes().Patch(ctx, "worker-2", types.MergePatchType, cordon, metav1.PatchOptions{})), forbidden: true},
		{what: "read a DaemonSet", err: getErr(node.AppsV1().DaemonSets("default").Get(ctx, "x", metav1.GetOptions{})), forbidden: true},
		{what: "evict another node's pod", err: drainClient{node}.PolicyV1().Evictions("default").Evict(ctx, eviction("theirs")), forbidden: true},
		{what: "delete its Node", err: node.CoreV1().Nodes().Delete(ctx, "worker-1", metav1.DeleteOptions{}), forbidden: true},
		{what: "evict its own pod", err: drainClient{node}.PolicyV1().Evictions("default").Evict(ctx, eviction("mine"))},
	}
	for _, c := range checks {
		if c.forbidden != apierrors.IsForbidden(c.err) || (!c.forbidden && c.err != nil) {
			t.Errorf("%s: %v (want forbidden=%v)", c.what, c.err, c.forbidden)
		}
	}
	list, err := node.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=worker-1"})
	if err != nil || len(list.Items) > 1 {
		t.Errorf("listing its own pods: %v", err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		_, err = node.CoreV1().Pods("default").Get(ctx, "mine", metav1.GetOptions{})
		if apierrors.IsForbidden(err) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "no relationship found between node") {
		t.Errorf("reading its evicted pod: %v, want 403 no relationship", err)
	}
	if _, err := (drainClient{node}).CoreV1().Pods("default").Get(ctx, "mine", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("through drainClient: %v, want NotFound", err)
	}
}

func patchErr[T any](_ T, err error) error { return err }
func getErr[T any](_ T, err error) error   { return err }

func eviction(name string) *policyv1.Eviction {
	zero := int64(0)
	return &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, DeleteOptions: &metav1.DeleteOptions{GracePeriodSeconds: &zero}}
}
