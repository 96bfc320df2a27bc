package onegatesim

import (
	"fmt"
	"strings"
	"testing"
)

// simpleTemplate is a 7.x service with no inputs; vars: deployment, gate,
// master and worker cardinality, worker parents.
func simpleTemplate(deployment string, gate bool, masters, workers int, parents string) string {
	return simpleTemplateV("", deployment, gate, masters, workers, parents)
}

// simpleTemplateV uses 6.x role keys for versions before 7.0.
func simpleTemplateV(version, deployment string, gate bool, masters, workers int, parents string) string {
	kind := `"type":"vm","template_id"`
	if version != "" && version < "7" {
		kind = `"vm_template"`
	}
	return fmt.Sprintf(`{"name":"svc","deployment":%q,"ready_status_gate":%t,"roles":[
	 {"name":"master",%s:1,"cardinality":%d},
	 {"name":"worker",%s:2,"cardinality":%d,"parents":[%s],"min_vms":0,"max_vms":5}]}`,
		deployment, gate, kind, masters, kind, workers, parents)
}

func TestAuth(t *testing.T) {
	h := newHarness(t, Options{})
	h.instantiate(simpleTemplate("none", false, 1, 1, `"master"`), "")
	other := h.instantiate(simpleTemplate("none", false, 1, 0, ""), "")
	_ = other
	master, worker, stranger := 100, 101, 102
	v101, _ := h.sim.VM(worker)
	cases := []struct {
		name   string
		r      req
		status int
		body   string
	}{
		{"no headers", req{method: "GET", path: "/vm", vm: -1}, 401, "Not authorized"},
		{"wrong token", req{method: "GET", path: "/vm", vm: master, token: "bm9wZQ=="}, 401, "Not authorized"},
		{"other VM's token", req{method: "GET", path: "/vm", vm: master, token: v101.Token.Reveal()}, 401, "Not authorized"},
		{"unknown VM", req{method: "GET", path: "/vm", vm: 999, token: "x"}, 401, "Not authorized"},
		{"root needs auth too", req{method: "GET", path: "/", vm: -1}, 401, "Not authorized"},
		{"own VM", req{method: "GET", path: "/vm", vm: master}, 200, ""},
		{"same service", req{method: "GET", path: fmt.Sprintf("/vms/%d", worker), vm: master}, 200, ""},
		{"other service", req{method: "GET", path: fmt.Sprintf("/vms/%d", master), vm: stranger}, 400, "Service 2 does not contain VM 100."},
		{"other service by PUT", req{method: "PUT", path: fmt.Sprintf("/vms/%d", master), vm: stranger, body: "A=1"}, 400, "Service 2 does not contain VM 100."},
		{"non-numeric id", req{method: "GET", path: "/vms/abc", vm: master}, 400, "Service 1 does not contain VM 0."},
		{"to_i prefix", req{method: "GET", path: fmt.Sprintf("/vms/%dxyz", worker), vm: master}, 200, ""},
		{"unsupported", req{method: "GET", path: "/vms/", vm: master}, 400, msgUnsupported},
		{"unsupported before auth", req{method: "DELETE", path: "/vm", vm: -1}, 400, msgUnsupported},
		{"vrouter", req{method: "GET", path: "/vrouter", vm: master}, 400, "Empty or invalid VROUTER_ID"},
		{"vnet bad id", req{method: "GET", path: "/vnet/x", vm: master}, 400, "Invalid id format (ID: x). ID must be an integer."},
		{"vnet not a vrouter", req{method: "GET", path: "/vnet/0", vm: master}, 400, "Virtual networks information can only be retrieved from Virtual Routers."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.do(c.r)
			if r.status != c.status || (c.body != "" && r.body != c.body) {
				t.Errorf("%s %s = %d %q; want %d %q", c.r.method, c.r.path, r.status, r.body, c.status, c.body)
			}
		})
	}
	h.sim.SetWrongToken(master)
	if r := h.do(req{method: "GET", path: "/vm", vm: master}); r.status != 401 {
		t.Errorf("SetWrongToken: %d", r.status)
	}
	h.sim.RestoreToken(master)
	if r := h.do(req{method: "GET", path: "/vm", vm: master}); r.status != 200 {
		t.Errorf("RestoreToken: %d", r.status)
	}
	if st := h.sim.Stats(master); st.Requests[RouteGetVM] < 4 || st.Status[401] < 3 {
		t.Errorf("stats of VM %d: %+v", master, st)
	}
}

func TestPutBodies(t *testing.T) {
	form := "application/x-www-form-urlencoded"
	cases := []struct {
		name    string
		version string
		r       req
		status  int
		body    string
		want    map[string]string // expected scalar USER_TEMPLATE entries ("" value: absent)
	}{
		{"form READY", "", req{body: "data=READY%3DYES&type=1", ctype: form}, 200, "", map[string]string{"READY": "YES"}},
		{"form without type", "", req{body: "data=A%3Dwith+spaces", ctype: form}, 200, "", map[string]string{"A": "with spaces"}},
		{"raw body", "", req{body: "A=raw"}, 200, "", map[string]string{"A": "raw"}},
		{"raw body, form type, no data (7.2+ rewinds)", "7.4", req{body: "A=raw", ctype: form}, 200, "", map[string]string{"A": "raw"}},
		{"raw body, form type, no data (6.10: Rack 2 rewinds)", "6.10", req{body: "A=raw", ctype: form}, 200, "", map[string]string{"A": "raw"}},
		{"raw body, form type, no data (7.0: Rack 3 ate it)", "7.0", req{body: "A=raw", ctype: form}, 200, "", map[string]string{"A": ""}},
		{"query type 2 with raw body", "", req{path: "/vm?type=2", body: "GONE"}, 200, "", map[string]string{"GONE": ""}},
		{"a=b", "", req{body: "data=A%3Da%3Db", ctype: form}, 200, "", map[string]string{"A": "a=b"}},
		{"a=b on 5.12", "5.12", req{body: "data=A%3Da%3Db", ctype: form}, 500, "", nil},
		{"x,y", "", req{body: "data=A%3Dx%2Cy", ctype: form}, 500, "Internal server error", nil},
		{"x,y before 7.2", "7.0", req{body: "data=A%3Dx%2Cy", ctype: form}, 500, `[one.vm.update] Parse error: syntax error, unexpected "','", expecting end of file at line 1, columns 6:7`, nil},
		{"empty value stores a quote", "", req{body: "data=A%3D", ctype: form}, 200, "", map[string]string{"A": `"`}},
		{"pre-quoted", "", req{body: `data=A%3D%22q+q%22`, ctype: form}, 200, "", map[string]string{"A": "q q"}},
		{"several lines", "", req{body: "data=K1%3DV1%0AK2%3DV2", ctype: form}, 200, "", map[string]string{"K1": "V1", "K2": "V2"}},
		{"literal backslash-n", "", req{body: "data=K1%3DV1%5CnK2%3DV2", ctype: form}, 200, "", map[string]string{"K1": "V1", "K2": "V2"}},
		{"lower-case key", "", req{body: "data=ready%3DYES", ctype: form}, 200, "", map[string]string{"READY": "YES"}},
		{"restricted", "", req{body: "data=ROLE_NAME%3Dx", ctype: form}, 403, "Attribute (ROLE_NAME) cannot be modified", map[string]string{"ROLE_NAME": "master"}},
		{"restricted lower-case", "", req{body: "data=service_id%3D9", ctype: form}, 403, "Attribute (service_id) cannot be modified", nil},
		{"restricted in second line", "", req{body: "data=A%3D1%0ASCHED_REQUIREMENTS%3Dx", ctype: form}, 403, "Attribute (SCHED_REQUIREMENTS) cannot be modified", map[string]string{"A": ""}},
		{"restricted erase", "", req{body: "data=ROLE_NAME&type=2", ctype: form}, 403, "Attribute (ROLE_NAME) cannot be deleted", nil},
		{"erase", "", req{body: "data=GONE&type=2", ctype: form}, 200, "", map[string]string{"GONE": "", "KEEP": "1"}},
		{"erase missing", "6.10", req{body: "data=NOPE&type=2", ctype: form}, 500, "attribute not found", nil},
		{"erase missing, 7.2+", "", req{body: "data=NOPE&type=2", ctype: form}, 500, "Internal server error", nil},
		{"erase is case-sensitive", "6.10", req{body: "data=gone&type=2", ctype: form}, 500, "attribute not found", map[string]string{"GONE": "x"}},
		{"type 0 erases too", "", req{body: "data=GONE&type=0", ctype: form}, 200, "", map[string]string{"GONE": ""}},
		{"invalid utf-8", "", req{body: "data=A%3D%FF", ctype: form}, 500, "invalid byte sequence in UTF-8", nil},
		{"no escaping on 5.10", "5.10", req{body: "data=A%3Dwith+spaces", ctype: form}, 500, "", nil},
		{"5.10 unquoted single word", "5.10", req{body: "data=READY%3DYES", ctype: form}, 200, "", map[string]string{"READY": "YES"}},
		{"vector", "", req{body: `data=V%3D%5BX%3D%221%22%5D`, ctype: form}, 200, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Options{Version: c.version})
			h.instantiate(simpleTemplateV(c.version, "none", false, 1, 0, ""), "")
			if r := h.putForm(100, "/vm", "GONE=x\nKEEP=1", 1); r.status != 200 {
				t.Fatalf("seeding: %d %s", r.status, r.body)
			}
			r := c.r
			r.method, r.vm = "PUT", 100
			if r.path == "" {
				r.path = "/vm"
			}
			got := h.do(r)
			if got.status != c.status || (c.body != "" && got.body != c.body) {
				t.Fatalf("PUT %q = %d %q; want %d %q", c.r.body, got.status, got.body, c.status, c.body)
			}
			if c.status == 200 && got.body != "" {
				t.Errorf("success body %q, want empty", got.body)
			}
			ut := h.sim.UserTemplate(100)
			for k, v := range c.want {
				if ut[k] != v {
					t.Errorf("USER_TEMPLATE[%s] = %q, want %q (all: %v)", k, ut[k], v, ut)
				}
			}
		})
	}
}

func TestPutEventsNeverCarryValues(t *testing.T) {
	h := newHarness(t, Options{})
	h.instantiate(simpleTemplate("none", false, 1, 0, ""), "")
	h.putForm(100, "/vm", "ONEGATE_K8S_TOKEN=sg7711.p19vy0eqxefc0lqz\nREADY=YES", 1)
	var found bool
	for _, e := range h.sim.Events() {
		if strings.Contains(e.String(), "sg7711") {
			t.Errorf("event leaks a value: %s", e)
		}
		found = found || (e.Kind == EventVMUpdated && e.Detail == "keys=ONEGATE_K8S_TOKEN,READY")
	}
	if !found {
		t.Errorf("no update event with the key names: %v", h.sim.Events())
	}
}
