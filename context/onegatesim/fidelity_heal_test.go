package onegatesim

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// OneFlow's reaction to VM states (src/flow/lib/ServiceWatchDog.rb,
// LifeCycleManager.rb error_wd_cb/done_wd_cb/running_wd_cb, models/service.rb
// can_scale?; the same logic @release-7.4.0 and @release-6.10.5) and oned's
// VM actions as OneGate performs them (onegate-server.rb perform_action,
// dm/DispatchManagerActions.cc).

// act posts a VM action as VM from would.
func (h *harness) act(from, vm int, action string) resp {
	h.t.Helper()
	return h.do(req{method: "POST", path: fmt.Sprintf("/vms/%d/action", vm), vm: from, body: action, ctype: "application/json"})
}

func perform(name string) string { return `{"action":{"perform":"` + name + `"}}` }

// cardinality reads a role's cardinality from GET /service, as a VM sees it.
func (h *harness) cardinality(from int, role string) int {
	h.t.Helper()
	r := h.do(req{method: "GET", path: "/service", vm: from})
	var doc struct {
		SERVICE struct {
			Roles []struct {
				Name        string `json:"name"`
				Cardinality int    `json:"cardinality"`
			} `json:"roles"`
		}
	}
	if err := json.Unmarshal([]byte(r.body), &doc); err != nil {
		h.t.Fatalf("GET /service: %d %q: %v", r.status, r.body, err)
	}
	for _, ro := range doc.SERVICE.Roles {
		if ro.Name == role {
			return ro.Cardinality
		}
	}
	h.t.Fatalf("no role %s in %s", role, r.body)
	return -1
}

// ServiceWatchDog::WARNING_STATES = POWEROFF, UNKNOWN + EventManager's
// FAILURE_STATES: any of them puts the role and the service in WARNING
// (error_wd_cb), and Service#can_scale? (state == RUNNING) then refuses
// every scale: OneFlow's own message to `oneflow scale`, OneGate's generic
// 400 to a VM.
func TestFidelity_WarningStatesBlockEveryScale(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		break_ func(h *harness) error
	}{
		{"poweroff through OneGate", func(h *harness) error {
			if r := h.act(100, 102, perform("poweroff")); r.status != 204 {
				return fmt.Errorf("poweroff = %d %q", r.status, r.body)
			}
			return nil
		}},
		{"onevm poweroff --hard", func(h *harness) error { return h.sim.Act(102, "poweroff", true) }},
		{"UNKNOWN", func(h *harness) error { return h.sim.SetLCMState(102, "UNKNOWN") }},
		{"BOOT_FAILURE", func(h *harness) error { return h.sim.SetLCMState(102, "BOOT_FAILURE") }},
		{"PROLOG_MIGRATE_UNKNOWN_FAILURE", func(h *harness) error { return h.sim.SetLCMState(102, "PROLOG_MIGRATE_UNKNOWN_FAILURE") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, Options{Cooldown: -1})
			svc := h.instantiate(simpleTemplate("none", false, 1, 2, ""), "")
			if err := c.break_(h); err != nil {
				t.Fatal(err)
			}
			if s, r := h.sim.ServiceState(svc), h.sim.RoleState(svc, "worker"); s != "WARNING" || r != "WARNING" {
				t.Fatalf("service %s, role %s; want WARNING, WARNING", s, r)
			}
			if m := h.sim.RoleState(svc, "master"); m != "RUNNING" {
				t.Errorf("master role %s, want RUNNING (only the VM's role is marked)", m)
			}
			if err := h.sim.Scale(svc, "worker", 3); err == nil || !strings.Contains(err.Error(), "Service cannot be scaled in state: WARNING") {
				t.Errorf("oneflow scale in WARNING = %v", err)
			}
			if r := h.do(req{method: "PUT", path: "/service/role/worker", vm: 100, body: `{"cardinality":3}`, ctype: "application/json"}); r.status != 400 || r.body != "Error performing action on service 1 role worker" {
				t.Errorf("OneGate scale in WARNING = %d %q", r.status, r.body)
			}
			if n := len(h.sim.RoleVMs(svc, "worker")); n != 2 {
				t.Errorf("%d workers after refused scales", n)
			}
		})
	}
}

// done_wd_cb: a VM that reaches DONE outside a scale (terminated through
// OneGate, soft or hard, or by an operator) is dropped from its role and
// the cardinality lowered by one (forced, so below min_vms too).
func TestFidelity_DoneVMIsDroppedAndCardinalityLowered(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		kill func(h *harness, vm int) error
	}{
		{"terminate", func(h *harness, vm int) error { return statusErr(h.act(100, vm, perform("terminate"))) }},
		{"terminate params true (onegate --hard)", func(h *harness, vm int) error {
			return statusErr(h.act(100, vm, `{"action":{"perform":"terminate","params":true}}`))
		}},
		{"delete (4.x)", func(h *harness, vm int) error { return statusErr(h.act(100, vm, perform("delete"))) }},
		{"itself", func(h *harness, vm int) error { return statusErr(h.act(vm, vm, perform("terminate"))) }},
		{"onevm terminate --hard", func(h *harness, vm int) error { return h.sim.TerminateHard(vm) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, Options{Cooldown: -1})
			svc := h.instantiate(simpleTemplate("none", false, 1, 3, ""), "")
			if err := c.kill(h, 102); err != nil {
				t.Fatal(err)
			}
			if got := roleIDs(h, "worker"); len(got) != 2 || got[0] != 101 || got[1] != 103 {
				t.Errorf("workers %v, want [101 103]", got)
			}
			if n := h.cardinality(100, "worker"); n != 2 {
				t.Errorf("cardinality %d, want 2", n)
			}
			if h.sim.ServiceState(svc) != "RUNNING" {
				t.Errorf("service %s", h.sim.ServiceState(svc))
			}
			if r := h.do(req{method: "GET", path: "/vm", vm: 102, token: "stale"}); r.status != 401 {
				t.Errorf("a DONE VM's request = %d, want 401", r.status)
			}
		})
	}
}

func statusErr(r resp) error {
	if r.status != 204 {
		return fmt.Errorf("action = %d %q", r.status, r.body)
	}
	return nil
}

// done_wd_cb changes no state: terminating the VM that caused the WARNING
// drops it and lowers the cardinality, but the role and the service stay
// in WARNING (and every scale refused) until a VM of the role comes
// (back) to RUNNING: running_wd_cb is the only way out, and
// Service#recover calls a Role#recover_warning that is commented out
// (models/role.rb @release-6.10.5, absent @release-7.4.0).
func TestFidelity_TerminatingTheBrokenVMLeavesWarning(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{Cooldown: -1})
	svc := h.instantiate(simpleTemplate("none", false, 1, 2, ""), "")
	if err := h.sim.SetLCMState(102, "UNKNOWN"); err != nil {
		t.Fatal(err)
	}
	if r := h.act(100, 102, `{"action":{"perform":"terminate","params":true}}`); r.status != 204 {
		t.Fatalf("terminate-hard = %d %q", r.status, r.body)
	}
	if got := roleIDs(h, "worker"); len(got) != 1 || h.cardinality(100, "worker") != 1 {
		t.Errorf("workers %v, cardinality %d; want [101], 1", got, h.cardinality(100, "worker"))
	}
	if s := h.sim.ServiceState(svc); s != "WARNING" {
		t.Errorf("service %s after the broken VM is DONE, want WARNING", s)
	}
	if err := h.sim.Scale(svc, "worker", 2); err == nil {
		t.Error("scale accepted in WARNING")
	}
	// A sibling of the role going RUNNING again ends it.
	if r := h.act(100, 101, perform("poweroff")); r.status != 204 {
		t.Fatalf("poweroff = %d %q", r.status, r.body)
	}
	if r := h.act(100, 101, perform("resume")); r.status != 204 {
		t.Fatalf("resume = %d %q", r.status, r.body)
	}
	if s := h.sim.ServiceState(svc); s != "RUNNING" {
		t.Errorf("service %s after a sibling is RUNNING again", s)
	}
	if err := h.sim.Scale(svc, "worker", 2); err != nil {
		t.Errorf("scale after the WARNING: %v", err)
	}
}

// running_wd_cb sets the role RUNNING on any of its VMs' RUNNING event, and
// the service RUNNING once all roles are, without looking at the role's
// other VMs: one resumed VM ends the WARNING while another is still off.
func TestFidelity_OneRunningVMEndsTheRolesWarning(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{Cooldown: -1})
	svc := h.instantiate(simpleTemplate("none", false, 1, 2, ""), "")
	for _, id := range []int{101, 102} {
		if err := h.sim.Act(id, "poweroff", true); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.sim.Act(101, "resume", false); err != nil {
		t.Fatal(err)
	}
	if s, r, vm := h.sim.ServiceState(svc), h.sim.RoleState(svc, "worker"), h.sim.VMState(102); s != "RUNNING" || r != "RUNNING" || vm != "POWEROFF" {
		t.Errorf("service %s, role %s, VM 102 %s; want RUNNING, RUNNING, POWEROFF", s, r, vm)
	}
}

// The watchdog ignores a service while it scales and cools down
// (scale_action: @wd.remove_service); add_service re-checks every node
// when it is RUNNING again: a VM terminated during the cooldown stays
// listed with the cardinality unchanged until then, and a VM powered off
// then turns the service WARNING only then. add_service triggers one
// callback per node in node order, so a RUNNING node listed after a
// POWEROFF one ends the WARNING again (running_wd_cb; the real server
// runs them in a pool, in no set order): the newest VM is powered off here.
func TestFidelity_WatchdogIgnoresACoolingService(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{Cooldown: 200 * time.Millisecond})
	svc := h.instantiate(simpleTemplate("none", false, 1, 2, ""), "")
	if err := h.sim.Scale(svc, "worker", 3); err != nil {
		t.Fatal(err)
	}
	if s := h.sim.ServiceState(svc); s != "COOLDOWN" {
		t.Fatalf("service %s after a scale", s)
	}
	if err := h.sim.TerminateHard(101); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.Act(103, "poweroff", true); err != nil {
		t.Fatal(err)
	}
	if got := roleIDs(h, "worker"); len(got) != 3 || h.cardinality(100, "worker") != 3 || h.sim.VMState(101) != "DONE" || h.sim.ServiceState(svc) != "COOLDOWN" {
		t.Errorf("during the cooldown: workers %v, cardinality %d, VM 101 %s, service %s", got, h.cardinality(100, "worker"), h.sim.VMState(101), h.sim.ServiceState(svc))
	}
	if err := h.sim.WaitFor(ctxTimeout(t), "the end of the cooldown", func() bool { return h.sim.ServiceState(svc) == "WARNING" }); err != nil {
		t.Fatal(err)
	}
	if got := roleIDs(h, "worker"); len(got) != 2 || h.cardinality(100, "worker") != 2 {
		t.Errorf("after the cooldown: workers %v, cardinality %d; want [102 103], 2", got, h.cardinality(100, "worker"))
	}
}

// A soft poweroff (LifeCycleActions trigger_poweroff) shows LCM_STATE
// SHUTDOWN_POWEROFF (18) while the guest gets the ACPI event, then STATE
// POWEROFF (8), LCM_STATE 0; resume boots it and it is RUNNING again. A
// hard one cuts the guest off at once.
func TestFidelity_SoftPoweroffAndResume(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{Cooldown: -1, ShutdownTimeout: time.Hour})
	svc := h.instantiate(simpleTemplate("none", false, 1, 2, ""), "")
	var mu sync.Mutex
	var seen []string
	h.sim.OnVMShutdown(func(v VMInfo) { mu.Lock(); seen = append(seen, fmt.Sprintf("acpi %d", v.ID)); mu.Unlock() })
	h.sim.OnVMPower(func(v VMInfo, p Power) { mu.Lock(); seen = append(seen, fmt.Sprintf("%s %d", p, v.ID)); mu.Unlock() })
	if r := h.act(100, 101, perform("poweroff")); r.status != 204 {
		t.Fatalf("poweroff = %d %q", r.status, r.body)
	}
	if r := h.do(req{method: "GET", path: "/vm", vm: 101}); !strings.Contains(r.body, `"STATE":"3","LCM_STATE":"18"`) {
		t.Errorf("GET /vm while powering off: %s", r.body)
	}
	if s := h.sim.ServiceState(svc); s != "RUNNING" {
		t.Errorf("service %s during SHUTDOWN_POWEROFF (not a warning state)", s)
	}
	if err := h.sim.PoweredOff(101); err != nil {
		t.Fatal(err)
	}
	if r := h.do(req{method: "GET", path: "/vms/101", vm: 100}); !strings.Contains(r.body, `"STATE":"8","LCM_STATE":"0"`) {
		t.Errorf("GET /vms/101 powered off: %s", r.body)
	}
	if s := h.sim.ServiceState(svc); s != "WARNING" {
		t.Errorf("service %s with a VM in POWEROFF", s)
	}
	if r := h.act(100, 101, perform("resume")); r.status != 204 {
		t.Fatalf("resume = %d %q", r.status, r.body)
	}
	if r := h.act(100, 102, `{"action":{"perform":"poweroff","params":{"hard":false}}}`); r.status != 204 {
		t.Fatalf("poweroff with params {} = %d %q", r.status, r.body)
	}
	// The hooks run in goroutines of their own, which wake no WaitFor.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d hooks ran, want 3", n)
		}
	}
	mu.Lock()
	got := strings.Join(seen, ", ")
	mu.Unlock()
	// Any params value but null/false is OCA's `hard`: {"hard":false} too.
	if got != "acpi 101, power-on 101, power-cut 102" {
		t.Errorf("hooks: %s", got)
	}
	if h.sim.VMState(101) != "RUNNING" || h.sim.VMState(102) != "POWEROFF" {
		t.Errorf("VM 101 %s, VM 102 %s", h.sim.VMState(101), h.sim.VMState(102))
	}
}

// DispatchManager refuses an action in a state it does not apply to; the
// server answers `halt 500, rc.message` (6.10 shows the message, 7.2+ hides
// it behind "Internal server error"). rename changes NAME, refusing what
// PoolObjectSQL::name_is_valid refuses.
func TestFidelity_ActionRefusalsAndRename(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{Version: "6.10", Cooldown: -1})
	h.instantiate(simpleTemplateV("6.10", "none", false, 1, 1, ""), "")
	cases := []struct {
		body   string
		status int
		text   string
	}{
		{perform("resume"), 500, "[one.vm.action] This action is not available for state RUNNING"},
		{`{"action":{"perform":"rename","params":"worker-a"}}`, 204, ""},
		{`{"action":{"perform":"rename","params":""}}`, 500, "[one.vm.rename] Invalid NAME, it cannot be empty"},
		{`{"action":{"perform":"rename","params":"a;b"}}`, 500, "[one.vm.rename] Invalid NAME, char ';' is not allowed"},
		{`{"action":{"perform":"rename","params":{"name":"x"}}}`, 500, "[one.vm.rename] the new name is not a string"},
		{perform("poweroff"), 204, ""},
		{perform("poweroff"), 500, "[one.vm.action] This action is not available for state POWEROFF"},
	}
	for _, c := range cases {
		if r := h.act(101, 101, c.body); r.status != c.status || r.body != c.text {
			t.Errorf("%s = %d %q, want %d %q", c.body, r.status, r.body, c.status, c.text)
		}
	}
	if v, _ := h.sim.VM(101); v.Name != "worker-a" {
		t.Errorf("name %q after rename", v.Name)
	}
	if r := h.do(req{method: "GET", path: "/vms/101", vm: 100}); !strings.Contains(r.body, `"NAME":"worker-a"`) {
		t.Errorf("GET /vms/101 after rename: %s", r.body)
	}
}

// oned terminates a VM in any *_FAILURE state (DispatchManager::terminate:
// lcm->trigger_delete, hard or not): OneFlow drops it and lowers the
// cardinality, and the service stays in WARNING.
func TestFidelity_TerminateAFailedVM(t *testing.T) {
	t.Parallel()
	for _, body := range []string{perform("terminate"), `{"action":{"perform":"terminate","params":true}}`} {
		h := newHarness(t, Options{Cooldown: -1})
		svc := h.instantiate(simpleTemplate("none", false, 1, 2, ""), "")
		if err := h.sim.SetLCMState(102, "PROLOG_FAILURE"); err != nil {
			t.Fatal(err)
		}
		if r := h.act(100, 102, body); r.status != 204 {
			t.Fatalf("%s on PROLOG_FAILURE = %d %q", body, r.status, r.body)
		}
		if got := roleIDs(h, "worker"); len(got) != 1 || h.cardinality(100, "worker") != 1 {
			t.Errorf("workers %v, cardinality %d; want [101], 1", got, h.cardinality(100, "worker"))
		}
		if s := h.sim.ServiceState(svc); s != "WARNING" {
			t.Errorf("service %s, want WARNING", s)
		}
	}
}
