package onegatesim

import (
	"os"
	"strings"
	"testing"
)

// referenceSim reproduces the reference's example numbering: service 21,
// first VM 49 (onegate.md §1.4, §1.5).
func referenceSim(t *testing.T, version string) (*harness, int) {
	h := newHarness(t, Options{
		Version: version, VMIDBase: 49, ServiceIDBase: 21,
		Endpoint: "http://127.0.0.1:5030", Clock: fixedClock,
	})
	tmpl, merge := "k8s-7.json", "k8s-7-merge.json"
	if strings.HasPrefix(version, "6.") || strings.HasPrefix(version, "5.") {
		tmpl, merge = "k8s-6.json", "k8s-6-merge.json"
	}
	return h, h.instantiate(string(readFile(t, tmpl)), string(readFile(t, merge)))
}

func TestFidelityGetVM(t *testing.T) {
	h, _ := referenceSim(t, "7.4")
	r := h.do(req{method: "GET", path: "/vm", vm: 49})
	want := `{"VM":{"NAME":"master_0_(service_21)","ID":"49","STATE":"3","LCM_STATE":"3",` +
		`"USER_TEMPLATE":{"ONEAPP_K8S_POD_CIDR":"10.244.0.0/16","ONEAPP_K8S_VERSION":"1.31","ROLE_NAME":"master","SERVICE_ID":"21"},` +
		`"TEMPLATE":{"NIC":[{"IP":"192.0.2.2","MAC":"02:00:c0:00:02:02","NAME":"NIC0","NETWORK":"Private"}],"NIC_ALIAS":[]}}}`
	if r.status != 200 || r.body != want {
		t.Fatalf("GET /vm = %d %s\nwant 200 %s", r.status, r.body, want)
	}
	if r.ctype != "application/json;charset=utf-8" {
		t.Errorf("Content-Type = %q", r.ctype)
	}
	// The reference's recommended request, byte for byte.
	body := "data=ONEGATE_K8S_TOKEN%3D%22sg7711.p19vy0eqxefc0lqz%22%0AONEGATE_K8S_HASH%3D%2209a9ed14%22%0AONEGATE_K8S_MASTER%3D%2210.0.0.5%22&type=1"
	if r := h.do(req{method: "PUT", path: "/vm", vm: 49, body: body, ctype: "application/x-www-form-urlencoded"}); r.status != 200 || r.body != "" {
		t.Fatalf("PUT /vm = %d %q, want 200 and an empty body", r.status, r.body)
	}
	r = h.do(req{method: "GET", path: "/vms/49", vm: 49})
	if !strings.Contains(r.body, `"ONEGATE_K8S_HASH":"09a9ed14","ONEGATE_K8S_MASTER":"10.0.0.5","ONEGATE_K8S_TOKEN":"sg7711.p19vy0eqxefc0lqz"`) {
		t.Errorf("GET /vms/49 after the update: %s", r.body)
	}
}

func TestFidelityRoot(t *testing.T) {
	h, _ := referenceSim(t, "7.4")
	r := h.do(req{method: "GET", path: "/", vm: 49})
	host := strings.TrimPrefix(h.url, "http://")
	want := `{"vm_info":"http://` + host + `/vm","service_info":"http://` + host + `/service"}`
	if r.status != 200 || r.body != want {
		t.Errorf("GET / = %d %s, want %s", r.status, r.body, want)
	}
}

func TestFidelityServiceShort(t *testing.T) {
	h, _ := referenceSim(t, "7.4")
	r := h.do(req{method: "GET", path: "/service", vm: 49})
	want := `{"SERVICE":{"name":"k8s-1","id":"21","state":1,"roles":[` +
		`{"name":"master","cardinality":1,"state":1,"nodes":[{"deploy_id":49,"running":null,"vm_info":{"VM":{"ID":"49","UID":"0","GID":"0","UNAME":"oneadmin","GNAME":"oneadmin","NAME":"master_0_(service_21)"}}}]},` +
		`{"name":"worker","cardinality":3,"state":0,"nodes":[]}]}}`
	if r.status != 200 || r.body != want {
		t.Fatalf("GET /service = %d %s\nwant %s", r.status, r.body, want)
	}
	h.ready(49)
	r = h.do(req{method: "GET", path: "/service", vm: 49})
	// The service stays DEPLOYING (1) until the workers report too.
	for _, frag := range []string{
		`"id":"21","state":1,"roles"`, `{"name":"master","cardinality":1,"state":2,`,
		`{"name":"worker","cardinality":3,"state":1,"nodes":[{"deploy_id":50,"running":null,`,
		`"NAME":"worker_2_(service_21)"`,
	} {
		if !strings.Contains(r.body, frag) {
			t.Errorf("GET /service after master READY lacks %s:\n%s", frag, r.body)
		}
	}
}

func TestFidelityServiceExtended(t *testing.T) {
	h, _ := referenceSim(t, "7.4")
	h.ready(49)
	for _, q := range []string{"?extended=true", "?extended=false", "?extended="} {
		r := h.do(req{method: "GET", path: "/service" + q, vm: 50})
		if r.status != 200 || !strings.Contains(r.body, `"CONTEXT":{`) || !strings.Contains(r.body, `"USER_TEMPLATE":{`) {
			t.Errorf("GET /service%s is not the extended form: %d %.200s", q, r.status, r.body)
		}
	}
	// Ruby's Rack gives nil for a bare key: that is the short form.
	if r := h.do(req{method: "GET", path: "/service?extended", vm: 50}); strings.Contains(r.body, `"CONTEXT"`) {
		t.Errorf("?extended without '=' gave the extended form")
	}
	// The CLI sends the parameter as a form body on the GET.
	r := h.do(req{method: "GET", path: "/service", vm: 50, body: "extended=true", ctype: "application/x-www-form-urlencoded"})
	if !strings.Contains(r.body, `"CONTEXT"`) {
		t.Errorf("extended=true in a form body was ignored")
	}
	golden(t, "service-extended-7.4.json", []byte(r.body+"\n"))
}

func TestFidelityService510(t *testing.T) {
	h, _ := referenceSim(t, "5.10")
	r := h.do(req{method: "GET", path: "/service?extended=true", vm: 49})
	if r.status != 200 || !strings.Contains(r.body, `"running":true`) || !strings.Contains(r.body, `"USER_TEMPLATE":{`) || strings.Contains(r.body, "NIC_ALIAS") {
		t.Errorf("5.10 GET /service: %d %s", r.status, r.body)
	}
	golden(t, "service-5.10.json", []byte(r.body+"\n"))
	if r := h.do(req{method: "GET", path: "/nothing", vm: 49}); r.status != 404 || r.body != msgNotFound510 {
		t.Errorf("5.10 unknown route = %d %q", r.status, r.body)
	}
}

func TestFidelityContextFiles(t *testing.T) {
	h, _ := referenceSim(t, "7.4")
	h.ready(49)
	for _, id := range []int{49, 50} {
		v, ok := h.sim.VM(id)
		if !ok {
			t.Fatalf("VM %d missing", id)
		}
		b, err := os.ReadFile(v.ContextFile)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "context-7.4-"+v.Role+".sh", b)
	}
	ctx := h.sim.Context(50)
	if ctx["K8S_MASTER_IP"] != "192.0.2.2" || ctx["ONEAPP_K8S_VERSION"] != "1.31" || ctx["VMID"] != "50" {
		t.Errorf("worker context: %v", ctx)
	}
}

func TestFidelityLegacy6(t *testing.T) {
	h, _ := referenceSim(t, "6.10")
	if ut := h.sim.UserTemplate(49); ut["ONEAPP_K8S_VERSION"] != "1.30" || ut["ROLE_NAME"] != "master" || ut["SERVICE_ID"] != "21" {
		t.Errorf("6.x user template: %v", ut)
	}
	h.ready(49)
	ctx := h.sim.Context(50)
	if ctx["K8S_MASTER_IP"] != "192.0.2.2" || ctx["ONEAPP_K8S_VERSION"] != "1.30" {
		t.Errorf("6.x worker context: %v", ctx)
	}
	r := h.do(req{method: "GET", path: "/vm", vm: 50})
	if !strings.Contains(r.body, `"NETWORK":"Private"`) {
		t.Errorf("6.x NIC network: %s", r.body)
	}
}

// TestContentTypeEverywhere: the server's before filter sets it on every
// answer, plain-text errors included.
func TestContentTypeEverywhere(t *testing.T) {
	h, _ := referenceSim(t, "7.4")
	for _, r := range []req{
		{method: "GET", path: "/vm", vm: -1},
		{method: "GET", path: "/unknown", vm: 49},
		{method: "PUT", path: "/vm", vm: 49, body: "ROLE_NAME=x"},
		{method: "DELETE", path: "/vm", vm: 49},
	} {
		if got := h.do(r); got.ctype != "application/json;charset=utf-8" {
			t.Errorf("%s %s: Content-Type %q", r.method, r.path, got.ctype)
		}
	}
}
