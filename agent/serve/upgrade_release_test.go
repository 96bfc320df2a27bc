package serve

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/onekube/onekube/agent/upgrade"
)

// A node-failed stop leaves a serving cluster: the failed node serve
// cordoned is uncordoned and its grant withdrawn. The owner's rerun
// drains it again before it is re-granted, its stale failure cleared
// first, so the new attempt is not stopped by the old claim.
func TestUpgradeNodeFailedLeavesNodeServing(t *testing.T) {
	ctx := context.Background()
	r := newUpgradeRig(t)
	r.writePlan(t)
	if _, err := r.u.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if data := r.plan(t); data[upgrade.KeyGrantPrefix+"m1"] != "apply" || data[upgrade.KeyCordonPrefix+"m1"] != "true" {
		t.Fatalf("plan after the first tick: %v", data)
	}
	// m1's executor fails its kubeadm step.
	n, _ := r.cs.CoreV1().Nodes().Get(ctx, "m1", metav1.GetOptions{})
	n.Annotations[upgrade.AnnotationStep] = "v1.37.2 failed"
	n.Annotations[upgrade.AnnotationError] = "kubeadm-upgrade: exited 1"
	n.Annotations["other"] = "kept"
	if _, err := r.cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := r.u.Tick(ctx)
	if err == nil || !strings.Contains(err.Error(), "(node-failed): node m1: kubeadm-upgrade: exited 1") {
		t.Fatalf("Tick = %v, want the node-failed stop", err)
	}
	data := r.plan(t)
	if !strings.Contains(data[upgrade.KeyStopped], "node-failed") {
		t.Fatalf("not stopped: %v", data)
	}
	if got := strings.Join(r.drain.log, ", "); got != "drain m1, uncordon m1" {
		t.Fatalf("drainer: %q, want m1 uncordoned", got)
	}
	if _, ok := data[upgrade.KeyCordonPrefix+"m1"]; ok {
		t.Fatalf("cordon mark kept: %v", data)
	}
	if _, ok := data[upgrade.KeyGrantPrefix+"m1"]; ok {
		t.Fatalf("grant kept: a rerun would retry under pods let back: %v", data)
	}

	// The owner runs onekube-flow upgrade again.
	cm, _ := r.cs.CoreV1().ConfigMaps("kube-system").Get(ctx, upgrade.PlanName, metav1.GetOptions{})
	p, _ := upgrade.ParsePlan(cm.Data)
	if cm.Data, err = upgrade.NextPlanData(cm.Data, p, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := r.cs.CoreV1().ConfigMaps("kube-system").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.u.Tick(ctx); err != nil {
		t.Fatalf("tick after the rerun: %v", err)
	}
	data = r.plan(t)
	if data[upgrade.KeyGrantPrefix+"m1"] != "apply" || data[upgrade.KeyStopped] != "" || data[upgrade.KeyCordonPrefix+"m1"] != "true" {
		t.Fatalf("plan after the rerun: %v", data)
	}
	if got := strings.Join(r.drain.log, ", "); got != "drain m1, uncordon m1, drain m1" {
		t.Fatalf("drainer after the rerun: %q, want m1 drained again", got)
	}
	n, _ = r.cs.CoreV1().Nodes().Get(ctx, "m1", metav1.GetOptions{})
	if _, ok := n.Annotations[upgrade.AnnotationStep]; ok || n.Annotations[upgrade.AnnotationError] != "" || n.Annotations["other"] != "kept" {
		t.Fatalf("m1's annotations after the re-grant: %v", n.Annotations)
	}
	// Before m1's executor polls: its old failure no longer stops anything.
	if _, err := r.u.Tick(ctx); err != nil || r.plan(t)[upgrade.KeyStopped] != "" {
		t.Fatalf("second tick after the rerun: %v, %v", err, r.plan(t))
	}
}
