package onegatesim

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Fidelity tests for the OneFlow side: each pins one behaviour of the real
// server, read in OpenNebula/one at release-6.10.5 or release-7.4.0 (the
// source is cited where the simulator implements it).

// template6 is the 6.x test service: master then worker, custom_attrs.
const template6 = `{"name":"k8s","deployment":"straight","ready_status_gate":true,
 "custom_attrs":{"ONEAPP_K8S_VERSION":"O|text|version||1.30"},
 "roles":[
  {"name":"master","vm_template":11,"cardinality":1,"vm_template_contents":"ONEAPP_K8S_VERSION=\"$ONEAPP_K8S_VERSION\""},
  {"name":"worker","vm_template":12,"cardinality":2,"parents":["master"],"vm_template_contents":"ONEAPP_K8S_VERSION=\"$ONEAPP_K8S_VERSION\""}]}`

const values6 = `"custom_attrs_values":{"ONEAPP_K8S_VERSION":"1.30"}`

func flowError(t *testing.T, err error) *FlowError {
	t.Helper()
	var fe *FlowError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v, want a OneFlow refusal", err)
	}
	return fe
}

// 6.10.5 merges the instantiate document with Hash#deep_merge
// (validator.rb), arrays element by element: roles by position, not name.
func TestFidelity_610_MergesRolesByPosition(t *testing.T) {
	t.Parallel()
	// The README's old 6.x example renames the master "worker".
	_, err := parseService([]byte(template6), []byte(`{`+values6+`,"roles":[{"name":"worker","cardinality":3}]}`), version{6, 10})
	if fe := flowError(t, err); fe.Status != 500 || fe.Message != "Role name 'worker' is repeated" {
		t.Errorf("by-name merge on 6.10 = %d %q", fe.Status, fe.Message)
	}
	// Positional, as onekube-flow's 6.x instantiate files are written.
	s, err := parseService([]byte(template6), []byte(`{`+values6+`,"roles":[{"name":"master"},{"name":"worker","cardinality":3}]}`), version{6, 10})
	if err != nil || s.roles[1].name != "worker" || s.roles[1].cardinality != 3 || s.roles[0].cardinality != 1 {
		t.Fatalf("positional merge: %+v, %v", s, err)
	}
	// Out of order, the names swap and the data stay: accepted, and wrong.
	s, err = parseService([]byte(template6), []byte(`{`+values6+`,"roles":[{"name":"worker","cardinality":3},{"name":"master"}]}`), version{6, 10})
	if err != nil || s.roles[0].name != "worker" || s.roles[0].templateID != 11 || s.roles[0].cardinality != 3 ||
		s.roles[1].name != "master" || s.roles[1].templateID != 12 || s.roles[1].parents[0] != "master" {
		t.Errorf("swapped merge: %+v, %v", s, err)
	}
	// 7.4 matches by name (handle_nested_values).
	s, err = parseService(mustRead(t, "k8s-7.json"), mustRead(t, "k8s-7-merge.json"), version{7, 4})
	if err != nil || s.roles[1].cardinality != 3 || s.roles[0].cardinality != 1 {
		t.Errorf("7.4 by-name merge: %+v, %v", s, err)
	}
}

// Four merge documents 6.10.5 refuses and the simulator used to accept
// (7.4 takes the first three).
func TestFidelity_610_RejectsFourMergeDocuments(t *testing.T) {
	t.Parallel()
	roleInputs := `{"name":"k8s","roles":[
	 {"name":"master","vm_template":11,"cardinality":1},
	 {"name":"worker","vm_template":12,"cardinality":1,"custom_attrs":{"K":"M|text|k"}}]}`
	cases := []struct {
		name, tmpl, merge string
		status            int
		msg               string
	}{
		{"a role merged by name", template6, `{` + values6 + `,"roles":[{"name":"worker","cardinality":3}]}`,
			500, "Role name 'worker' is repeated"},
		{"7.x user_inputs_values for custom_attrs", template6, `{"user_inputs_values":{"ONEAPP_K8S_VERSION":"1.30"}}`,
			400, "The Service template specifies custom attributes but no values have been found"},
		{"more roles than the template: the merge's array wins", template6,
			`{` + values6 + `,"roles":[{"name":"master"},{"name":"worker"},{"name":"extra"}]}`,
			500, "KEY: 'vm_template' is required;"},
		{"role inputs for a role the merge does not name", roleInputs, `{"roles":[{"name":"master"}]}`,
			400, "undefined method `[]' for nil"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseService([]byte(c.tmpl), []byte(c.merge), version{6, 10})
			if fe := flowError(t, err); fe.Status != c.status || fe.Message != c.msg {
				t.Errorf("6.10 = %d %q, want %d %q", fe.Status, fe.Message, c.status, c.msg)
			}
			if _, err := parseService([]byte(c.tmpl), []byte(c.merge), version{7, 4}); i < 3 && err != nil {
				t.Errorf("7.4 refuses it too: %v", err)
			}
		})
	}
	// The last one on 7.4: a role the merge does not name is skipped, but
	// still needs its values when it is named.
	conv := strings.ReplaceAll(roleInputs, `"custom_attrs"`, `"user_inputs"`)
	conv = strings.ReplaceAll(conv, `"vm_template"`, `"type":"vm","template_id"`)
	if _, err := parseService([]byte(conv), []byte(`{"roles":[{"name":"master"}]}`), version{7, 4}); err != nil {
		t.Errorf("7.4 skips the unnamed role: %v", err)
	}
}

// 6.10.5 knows only 6.x keys: extra keys pass the validator unread, so a
// 7.x role is missing vm_template, template_contents does nothing, and a
// role's user_inputs_values is appended to vm_template_contents as lines
// (Service#resolve_attributes).
func TestFidelity_610_Treats7xKeysAsUnknown(t *testing.T) {
	t.Parallel()
	_, err := parseService([]byte(`{"name":"x","roles":[{"name":"a","type":"vm","template_id":1}]}`), nil, version{6, 10})
	if fe := flowError(t, err); fe.Status != 400 || fe.Message != "KEY: 'vm_template' is required;" {
		t.Errorf("7.x role on 6.10 = %d %q", fe.Status, fe.Message)
	}
	h := newHarness(t, Options{Version: "6.10"})
	h.instantiate(`{"name":"x","roles":[{"name":"a","vm_template":1,"cardinality":1,
	  "template_contents":{"CONTEXT":{"FROM_7X":"yes"}},"user_inputs_values":{"ROLE_INPUT":"v"}}]}`, "")
	if ctx := h.sim.Context(100); ctx["FROM_7X"] != "" {
		t.Errorf("template_contents reached CONTEXT on 6.10: %v", ctx)
	}
	if ut := h.sim.UserTemplate(100); ut["ROLE_INPUT"] != "v" {
		t.Errorf("role user_inputs_values not appended as an attribute: %v", ut)
	}
}

// 7.4 converts a document whose every role has vm_template or
// vm_template_contents (ServiceTemplate.convert_template), then deploys it
// as 7.x: inputs reach CONTEXT, CONTEXT merges. A marketplace export of a
// 7.x template (every role also carries vm_template) is one of them, and
// vm_template's value replaces template_id.
func TestFidelity_74_ConvertsOldFormatDocuments(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{})
	h.instantiate(template6, `{`+values6+`}`)
	ctx, ut := h.sim.Context(100), h.sim.UserTemplate(100)
	if ctx["ONEAPP_K8S_VERSION"] != "1.30" || ctx["TOKEN"] != "YES" || ut["ONEAPP_K8S_VERSION"] != "1.30" {
		t.Errorf("converted 6.x master: context %v, user template %v", ctx, ut)
	}
	export := `{"name":"x","roles":[{"name":"a","type":"vm","template_id":5,"vm_template":7,"cardinality":1,
	  "template_contents":{"CONTEXT":{"KEPT":"yes"}}}]}`
	s, err := parseService([]byte(export), nil, version{7, 4})
	if err != nil || s.roles[0].templateID != 7 || !strings.Contains(s.roles[0].text, `KEPT = "yes"`) {
		t.Errorf("marketplace export: %+v, %v", s, err)
	}
	// Role-level custom_attrs_values do not survive the conversion.
	s, err = parseService([]byte(`{"name":"x","roles":[{"name":"a","vm_template":1,"cardinality":1,
	  "vm_template_contents":"A=\"$A\"","custom_attrs_values":{"A":"lost"}}]}`), nil, version{7, 4})
	if err != nil || strings.Contains(s.roles[0].text, "lost") {
		t.Errorf("role custom_attrs_values survived the conversion: %+v, %v", s, err)
	}
}

// Without networks_values the route derives them from each networks
// string; "id:" gives a null id, fill_template writes it into the NIC, and
// oned cannot instantiate the VMs: the role fails to deploy.
func TestFidelity_74_NullNetworkVMsFailToDeploy(t *testing.T) {
	t.Parallel()
	tmpl := `{"name":"x","networks":{"Private":"M|network|net||id:"},"roles":[
	  {"name":"a","type":"vm","template_id":1,"cardinality":2,"template_contents":{"NIC":[{"NETWORK_ID":"$Private"}]}}]}`
	h := newHarness(t, Options{})
	svc := h.instantiate(tmpl, "")
	if n := len(h.sim.VMs()); n != 0 || h.sim.RoleState(svc, "a") != "FAILED_DEPLOYING" || h.sim.ServiceState(svc) != "FAILED_DEPLOYING" {
		t.Errorf("null network: %d VMs, role %s, service %s", n, h.sim.RoleState(svc, "a"), h.sim.ServiceState(svc))
	}
	found := false
	for _, e := range h.sim.Events() {
		found = found || (e.Kind == EventError && strings.Contains(e.Detail, `NETWORK_ID ""`))
	}
	if !found {
		t.Errorf("no error event naming the empty NETWORK_ID: %v", h.sim.Events())
	}
	if err := h.sim.WaitServiceRunning(ctxTimeout(t)); !errors.Is(err, ErrServiceFailed) {
		t.Errorf("WaitServiceRunning = %v, want ErrServiceFailed at once", err)
	}
	h = newHarness(t, Options{})
	svc = h.instantiate(tmpl, `{"networks_values":[{"Private":{"id":"4"}}]}`)
	if vms := h.sim.RoleVMs(svc, "a"); len(vms) != 2 || h.sim.ServiceState(svc) != "RUNNING" {
		t.Errorf("with networks_values: %d VMs, %s", len(vms), h.sim.ServiceState(svc))
	}
	if r := h.do(req{method: "GET", path: "/vm", vm: 100}); !strings.Contains(r.body, `"NETWORK":"Private"`) {
		t.Errorf("NIC network: %s", r.body)
	}
	// 6.10 resolves the null id to "" in the text: the same end.
	h6 := newHarness(t, Options{Version: "6.10"})
	svc = h6.instantiate(`{"name":"x","networks":{"Private":"M|network|net||id:"},"roles":[
	  {"name":"a","vm_template":1,"cardinality":1,"vm_template_contents":"NIC=[NETWORK_ID=\"$Private\"]"}]}`, "")
	if h6.sim.RoleState(svc, "a") != "FAILED_DEPLOYING" {
		t.Errorf("6.10 null network: role %s", h6.sim.RoleState(svc, "a"))
	}
}

// A NIC written as one object, not a list, makes fill_template raise: the
// service is FAILED_DEPLOYING before any role deploys.
func TestFidelity_74_NICObjectFailsTheService(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{})
	svc := h.instantiate(`{"name":"x","roles":[{"name":"a","type":"vm","template_id":1,"cardinality":1,
	  "template_contents":{"NIC":{"NETWORK_ID":"0"}}}]}`, "")
	if h.sim.ServiceState(svc) != "FAILED_DEPLOYING" || h.sim.RoleState(svc, "a") != "PENDING" || len(h.sim.VMs()) != 0 {
		t.Errorf("service %s, role %s, %d VMs", h.sim.ServiceState(svc), h.sim.RoleState(svc, "a"), len(h.sim.VMs()))
	}
}

// LifeCycleManager#scale_action: a cardinality equal to the current one is
// "Cardinality of R is already at N" (release-7.4.0 and 6.10.5).
func TestFidelity_ScalingToTheCurrentCardinalityIsAnError(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{Cooldown: -1})
	svc := h.instantiate(simpleTemplate("none", false, 1, 2, ""), "")
	if err := h.sim.Scale(svc, "worker", 2); err == nil || !strings.Contains(err.Error(), "Cardinality of worker is already at 2") {
		t.Errorf("Scale to 2 = %v", err)
	}
	r := h.do(req{method: "PUT", path: "/service/role/worker", vm: 100, body: `{"cardinality":2}`, ctype: "application/json"})
	if r.status != 400 || r.body != "Error performing action on service 1 role worker" {
		t.Errorf("through OneGate: %d %q", r.status, r.body)
	}
}

// VMRole#initialize: a role without cooldown gets oneflow-server.conf's
// :default_cooldown: 300.
func TestFidelity_DefaultCooldownIs300s(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{})
	svc := h.instantiate(simpleTemplate("none", false, 1, 1, ""), "")
	if err := h.sim.Scale(svc, "worker", 2); err != nil {
		t.Fatal(err)
	}
	h.sim.mu.Lock()
	got := h.sim.cooldown(h.sim.services[svc].role("worker"))
	h.sim.mu.Unlock()
	if got != 300*time.Second || h.sim.ServiceState(svc) != "COOLDOWN" {
		t.Errorf("cooldown %s, state %s", got, h.sim.ServiceState(svc))
	}
}

// oneflow-server.rb POST /service/:id/scale: call_body['cardinality'].to_i,
// so "3abc" is 3, "abc" and null are 0, 2.9 is 2, and true (no to_i) is a
// refusal. OneGate passes the value on untouched.
func TestFidelity_ScaleCardinalityGoesThroughToI(t *testing.T) {
	t.Parallel()
	cases := []struct {
		body    string
		status  int
		workers int
	}{
		{`{"cardinality":"3abc"}`, 200, 3},
		{`{"cardinality":2.9}`, 200, 2},
		{`{"cardinality":"abc"}`, 200, 0},
		{`{"cardinality":null}`, 200, 0},
		{`{}`, 200, 0},
		{`{"cardinality":true}`, 400, 1},
		{`{"cardinality":[3]}`, 400, 1},
	}
	for _, c := range cases {
		t.Run(c.body, func(t *testing.T) {
			h := newHarness(t, Options{Cooldown: -1})
			svc := h.instantiate(simpleTemplate("none", false, 1, 1, ""), "")
			r := h.do(req{method: "PUT", path: "/service/role/worker", vm: 100, body: c.body, ctype: "application/json"})
			if r.status != c.status || len(h.sim.RoleVMs(svc, "worker")) != c.workers {
				t.Errorf("%s = %d %q, %d workers; want %d, %d", c.body, r.status, r.body, len(h.sim.RoleVMs(svc, "worker")), c.status, c.workers)
			}
		})
	}
}

// Role#shutdown terminates nodes[0..n-1]: scaling down removes the role's
// oldest VMs, not its newest.
func TestFidelity_ScaleDownTerminatesTheOldestVMs(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{Cooldown: -1})
	svc := h.instantiate(simpleTemplate("none", false, 1, 3, ""), "")
	if err := h.sim.Scale(svc, "worker", 1); err != nil {
		t.Fatal(err)
	}
	if got := roleIDs(h, "worker"); len(got) != 1 || got[0] != 103 {
		t.Errorf("workers left: %v, want [103]", got)
	}
}
