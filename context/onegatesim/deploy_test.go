package onegatesim

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func roleIDs(h *harness, role string) []int {
	var ids []int
	for _, v := range h.sim.RoleVMs(1, role) {
		ids = append(ids, v.ID)
	}
	return ids
}

func TestStraightWithReadyGate(t *testing.T) {
	h := newHarness(t, Options{})
	var mu sync.Mutex
	var created []string
	h.sim.OnVMCreated(func(v VMInfo) {
		mu.Lock()
		created = append(created, v.Name)
		mu.Unlock()
	})
	svc := h.instantiate(simpleTemplate("straight", true, 2, 2, `"master"`), "")
	if got := roleIDs(h, "worker"); len(got) != 0 {
		t.Fatalf("workers before any master is ready: %v", got)
	}
	h.ready(100)
	if got := roleIDs(h, "worker"); len(got) != 0 {
		t.Fatalf("workers after one of two masters is ready: %v", got)
	}
	// A combined update counts, as OneFlow's event match does.
	if r := h.putForm(101, "/vm", "ONEGATE_K8S_TOKEN=abc\nREADY = YES", 1); r.status != 200 {
		t.Fatalf("combined update: %d %s", r.status, r.body)
	}
	if err := h.sim.WaitRoleVMs(ctxTimeout(t), svc, "worker", 2); err != nil {
		t.Fatal(err)
	}
	if h.sim.ServiceState(svc) != "DEPLOYING" || h.sim.RoleState(svc, "master") != "RUNNING" {
		t.Errorf("states: service %s master %s", h.sim.ServiceState(svc), h.sim.RoleState(svc, "master"))
	}
	h.ready(102)
	h.ready(103)
	if err := h.sim.WaitServiceRunning(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.WaitFor(ctxTimeout(t), "four notices", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(created) == 4
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"master_0_(service_1)", "master_1_(service_1)", "worker_0_(service_1)", "worker_1_(service_1)"}
	mu.Lock()
	defer mu.Unlock()
	for i := range want {
		if created[i] != want[i] {
			t.Errorf("creation notices %v, want %v", created, want)
			break
		}
	}
}

func TestReadyValues(t *testing.T) {
	cases := []struct {
		name, data string
		ready      bool
	}{
		{"YES", "READY=YES", true},
		{"quoted", `READY="YES"`, true},
		{"padded value", "READY= YES ", true},
		{"lower-case key (parser upper-cases it)", "ready=YES", true},
		{"lower-case value", "READY=yes", false},
		{"NO", "READY=NO", false},
		{"substring matches the event", "NOT_READY=YES", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			h.instantiate(simpleTemplate("straight", true, 1, 1, `"master"`), "")
			if r := h.putForm(100, "/vm", c.data, 1); r.status != 200 {
				t.Fatalf("PUT %q: %d %s", c.data, r.status, r.body)
			}
			if got := len(roleIDs(h, "worker")) == 1; got != c.ready {
				t.Errorf("after %q workers deployed = %v, want %v", c.data, got, c.ready)
			}
		})
	}
}

func TestDeploymentModes(t *testing.T) {
	cases := []struct {
		name       string
		deployment string
		gate       bool
		parents    string
		workers    int // right after instantiate
		running    bool
	}{
		{"none deploys all at once", "none", true, `"master"`, 2, false},
		{"straight without gate", "straight", false, `"master"`, 2, true},
		{"straight with gate", "straight", true, `"master"`, 0, false},
		{"missing parent never deploys", "straight", false, `"nosuch"`, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			svc := h.instantiate(simpleTemplate(c.deployment, c.gate, 1, 2, c.parents), "")
			if got := len(roleIDs(h, "worker")); got != c.workers {
				t.Errorf("workers = %d, want %d", got, c.workers)
			}
			if got := h.sim.ServiceState(svc) == "RUNNING"; got != c.running {
				t.Errorf("service state %s", h.sim.ServiceState(svc))
			}
		})
	}
	t.Run("missing parent: the wait times out", func(t *testing.T) {
		h := newHarness(t, Options{})
		h.instantiate(simpleTemplate("straight", false, 1, 1, `"nosuch"`), "")
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if err := h.sim.WaitServiceRunning(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("WaitServiceRunning = %v", err)
		}
	})
}

func TestScale(t *testing.T) {
	h := newHarness(t, Options{Cooldown: -1})
	svc := h.instantiate(simpleTemplate("straight", true, 1, 1, `"master"`), "")
	put := func(vm int, role, body string) resp {
		return h.do(req{method: "PUT", path: "/service/role/" + role, vm: vm, body: body, ctype: "application/json"})
	}
	if r := put(100, "worker", `{"cardinality":3}`); r.status != 400 || r.body != "Error performing action on service 1 role worker" {
		t.Errorf("scaling while DEPLOYING = %d %q", r.status, r.body)
	}
	h.ready(100)
	h.ready(101)
	if err := h.sim.WaitServiceRunning(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if r := put(100, "worker", `{"cardinality":3}`); r.status != 200 || r.body != "" {
		t.Fatalf("scale up = %d %q", r.status, r.body)
	}
	if got := roleIDs(h, "worker"); len(got) != 3 || got[2] != 103 {
		t.Fatalf("workers after scale up: %v", got)
	}
	if v, _ := h.sim.VM(103); v.Name != "worker_2_(service_1)" {
		t.Errorf("new VM name %q", v.Name)
	}
	if h.sim.ServiceState(svc) != "SCALING" {
		t.Errorf("service state while new VMs boot: %s", h.sim.ServiceState(svc))
	}
	h.ready(102)
	h.ready(103)
	if err := h.sim.WaitServiceRunning(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	// The oldest workers go first (Role#shutdown takes nodes[0..n-1]).
	if r := put(103, "worker", `{"cardinality":1}`); r.status != 200 {
		t.Fatalf("scale down = %d %q", r.status, r.body)
	}
	if got := roleIDs(h, "worker"); len(got) != 1 || got[0] != 103 {
		t.Fatalf("workers after scale down: %v", got)
	}
	if r := h.do(req{method: "GET", path: "/vm", vm: 101, token: "stale"}); r.status != 401 {
		t.Errorf("removed VM still answered: %d", r.status)
	}
	for _, c := range []struct {
		role, body string
		status     int
	}{
		{"worker", `{"cardinality":6}`, 400}, // max_vms 5
		{"worker", `{"cardinality":1}`, 400}, // already at 1
		{"nosuch", `{"cardinality":2}`, 400},
		{"worker", `{"cardinality":true}`, 400}, // OneFlow: no to_i for true
		{"worker", `not json`, 500},
		{"worker", `[1]`, 500},
	} {
		if r := put(100, c.role, c.body); r.status != c.status {
			t.Errorf("PUT /service/role/%s %s = %d %q, want %d", c.role, c.body, r.status, r.body, c.status)
		}
	}
}

func TestCooldown(t *testing.T) {
	h := newHarness(t, Options{Cooldown: 30 * time.Millisecond})
	svc := h.instantiate(simpleTemplate("none", false, 1, 1, ""), "")
	if err := h.sim.Scale(svc, "worker", 2); err != nil {
		t.Fatal(err)
	}
	if st := h.sim.ServiceState(svc); st != "COOLDOWN" {
		t.Errorf("state right after scaling without gate: %s", st)
	}
	if err := h.sim.WaitServiceRunning(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.Scale(svc, "worker", 9); err == nil {
		t.Error("scaling past max_vms accepted")
	}
}

func TestTerminateAction(t *testing.T) {
	h := newHarness(t, Options{})
	h.instantiate(simpleTemplate("none", false, 1, 2, ""), "")
	act := func(vm int, path, body string) resp {
		return h.do(req{method: "POST", path: path, vm: vm, body: body, ctype: "application/json"})
	}
	cases := []struct {
		body   string
		status int
		msg    string
	}{
		{`{"action":{"perform":"reboot"}}`, 403, "Action (reboot) is not allowed on this resource"},
		{`{"action":{"perform":"fly"}}`, 500, "Internal server error"}, // an explicit halt 500, 7.2+
		{`{"nope":1}`, 400, "Error parsing JSON: Wrong resource type"},
		{`{"action":{"perform":"resched"}}`, 204, ""},
		{`{"action":{"perform":"terminate"}}`, 204, ""},
	}
	for _, c := range cases {
		if r := act(100, "/vms/102/action", c.body); r.status != c.status || r.body != c.msg {
			t.Errorf("action %s = %d %q, want %d %q", c.body, r.status, r.body, c.status, c.msg)
		}
	}
	if _, ok := h.sim.VM(102); ok {
		t.Error("terminated VM still exists")
	}
}
