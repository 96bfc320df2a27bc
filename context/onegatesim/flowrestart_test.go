package onegatesim

import "testing"

// Restarting oneflow-server ends the WARNING a terminated broken VM left
// (the watchdog checks every node again on add_service), and leaves a
// WARNING whose VM is still broken as it is.
func TestRestartFlowEndsTheStickyWarning(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{Cooldown: -1})
	svc := h.instantiate(simpleTemplate("none", false, 1, 3, ""), "")
	for _, id := range []int{102, 103} {
		if err := h.sim.SetLCMState(id, "BOOT_FAILURE"); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.sim.TerminateHard(102); err != nil {
		t.Fatal(err)
	}
	h.sim.RestartFlow()
	if s := h.sim.ServiceState(svc); s != "WARNING" {
		t.Errorf("service %s after a restart with VM 103 still failed, want WARNING", s)
	}
	if err := h.sim.TerminateHard(103); err != nil {
		t.Fatal(err)
	}
	if s := h.sim.ServiceState(svc); s != "WARNING" {
		t.Fatalf("service %s after the failed VMs went DONE, want the sticky WARNING", s)
	}
	h.sim.RestartFlow()
	if s, r := h.sim.ServiceState(svc), h.sim.RoleState(svc, "worker"); s != "RUNNING" || r != "RUNNING" {
		t.Errorf("service %s, role %s after oneflow-server restarted, want RUNNING", s, r)
	}
	if err := h.sim.Scale(svc, "worker", 3); err != nil {
		t.Errorf("scale after the restart: %v", err)
	}
}
