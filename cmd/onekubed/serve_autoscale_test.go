package main

import (
	"log/slog"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/onekube/onekube/agent/autoscale"
	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
)

// The loop exists only when this master's CONTEXT says so, with the bounds
// it says; a value that does not parse leaves it off.
func TestAutoscaleLoopFromContext(t *testing.T) {
	t.Parallel()
	og, log := unusedGate(t), slog.New(slog.DiscardHandler)
	for _, c := range []struct {
		value string
		want  *autoscale.Bounds
	}{
		{"", nil},
		{"1:4", &autoscale.Bounds{Min: 1, Max: 4}},
		{"4:1", nil},
		{"1-4", nil},
	} {
		vars := vmcontext.Vars{vmcontext.KeyAutoscale: c.value}
		got := autoscaleLoop(vars, autoscaleFlags{}, og, fake.NewClientset(), system.RealClock{}, log)
		switch {
		case c.want == nil && got != nil:
			t.Errorf("%q: a loop with %+v", c.value, got.Bounds)
		case c.want != nil && (got == nil || got.Bounds != *c.want || got.Role != "worker" || got.Scaler == nil):
			t.Errorf("%q: loop %+v, want bounds %+v", c.value, got, *c.want)
		}
	}
}

// The worker role's VM size in this master's CONTEXT becomes the loop's
// template for scaling from zero workers; absent or malformed, there is
// none (and the loop still runs).
func TestAutoscaleLoopWorkerTemplate(t *testing.T) {
	t.Parallel()
	og, log := unusedGate(t), slog.New(slog.DiscardHandler)
	for _, c := range []struct {
		value string
		want  *autoscale.WorkerSize
	}{
		{"", nil},
		{"vcpu=2 memory=4096", &autoscale.WorkerSize{VCPU: 2, MemoryMB: 4096}},
		{"vcpu=2", nil},
		{"vcpu=2 memory=4096 gpu=1", nil},
	} {
		vars := vmcontext.Vars{vmcontext.KeyAutoscale: "0:3", vmcontext.KeyWorkerTemplate: c.value}
		got := autoscaleLoop(vars, autoscaleFlags{}, og, fake.NewClientset(), system.RealClock{}, log)
		if got == nil {
			t.Fatalf("%q: no loop", c.value)
		}
		switch {
		case c.want == nil && got.VMTemplate != nil:
			t.Errorf("%q: a worker template", c.value)
		case c.want != nil && got.VMTemplate == nil:
			t.Errorf("%q: no worker template", c.value)
		case c.want != nil:
			if w, ok := got.VMTemplate(); !ok || w.VCPU != c.want.VCPU || w.MemoryMB != c.want.MemoryMB {
				t.Errorf("%q: template %+v, want %+v", c.value, w, *c.want)
			}
		}
		if got.Bounds != (autoscale.Bounds{Min: 0, Max: 3}) {
			t.Errorf("bounds %+v", got.Bounds)
		}
	}
}

// unusedGate is a OneGate client the loop is built with but never calls.
func unusedGate(t *testing.T) gate.OneGate {
	t.Helper()
	og, err := gate.NewClient(gate.Config{Creds: vmcontext.Credentials{Endpoint: "http://127.0.0.1:1", VMID: 5, Token: vmcontext.NewSecret("t")}})
	if err != nil {
		t.Fatal(err)
	}
	return og
}
