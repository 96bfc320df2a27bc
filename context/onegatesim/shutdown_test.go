package onegatesim

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// Soft terminate on scale-down: the oldest VM shows LCM_STATE SHUTDOWN
// (12) to itself through OneGate, the guest hook runs, the role stays
// SCALING until the VM is DONE (powered off, or the timeout), and only
// then is it dropped; terminate-hard drops a VM at once and lowers the
// cardinality (done_wd_cb).
func TestSoftTerminateOnScaleDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{Cooldown: -1, ShutdownTimeout: time.Hour})
	svc := h.instantiate(simpleTemplate("none", false, 1, 3, ""), "")
	var mu sync.Mutex
	var shut []int
	h.sim.OnVMShutdown(func(v VMInfo) {
		mu.Lock()
		shut = append(shut, v.ID)
		mu.Unlock()
	})
	if err := h.sim.Scale(svc, "worker", 2); err != nil {
		t.Fatal(err)
	}
	if r := h.do(req{method: "GET", path: "/vm", vm: 101}); !strings.Contains(r.body, `"LCM_STATE":"12"`) {
		t.Errorf("the oldest worker's GET /vm: %s", r.body)
	}
	if r := h.do(req{method: "GET", path: "/vm", vm: 102}); !strings.Contains(r.body, `"LCM_STATE":"3"`) {
		t.Errorf("a kept worker's GET /vm: %s", r.body)
	}
	if got := h.sim.RoleState(svc, "worker"); got != "SCALING" {
		t.Errorf("role %s while the VM shuts down, want SCALING", got)
	}
	if err := h.sim.WaitFor(ctxTimeout(t), "the shutdown hook", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(shut) == 1 && shut[0] == 101
	}); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.PoweredOff(101); err != nil {
		t.Fatal(err)
	}
	if got := roleIDs(h, "worker"); len(got) != 2 || got[0] != 102 || h.sim.RoleState(svc, "worker") != "RUNNING" {
		t.Errorf("after power-off: workers %v, role %s", got, h.sim.RoleState(svc, "worker"))
	}
	if err := h.sim.TerminateHard(102); err != nil {
		t.Fatal(err)
	}
	if got := roleIDs(h, "worker"); len(got) != 1 || got[0] != 103 {
		t.Errorf("after terminate-hard: %v", got)
	}
	if r := h.do(req{method: "GET", path: "/service", vm: 103}); !strings.Contains(r.body, `"cardinality":1`) {
		t.Errorf("terminate-hard did not lower the cardinality: %s", r.body)
	}
}

// A guest that never powers off is destroyed at SHUTDOWN_TIMEOUT.
func TestSoftTerminateTimesOut(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{Cooldown: -1, ShutdownTimeout: 50 * time.Millisecond})
	svc := h.instantiate(simpleTemplate("none", false, 1, 2, ""), "")
	if err := h.sim.Scale(svc, "worker", 1); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.WaitRoleVMs(ctxTimeout(t), svc, "worker", 1); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range h.sim.Events() {
		found = found || strings.Contains(e.Detail, "SHUTDOWN_TIMEOUT")
	}
	if !found {
		t.Error("no timeout event")
	}
}
