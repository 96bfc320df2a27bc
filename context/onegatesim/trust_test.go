package onegatesim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"testing"
)

// Trust tests: what a VM holding only its own token can do to its
// siblings, as shared/reference/onegate-trust.md found on the real 7.4.0
// and 6.10.5 servers with the default onegate-server.conf.

// bypassSpellings are the lines the restricted-attribute check lets
// through (parts[0].upcase is not a restricted name) and oned's parser
// still reads as ROLE_NAME=evil.
var bypassSpellings = []string{
	"\tROLE_NAME=evil",
	" ROLE_NAME=evil",
	"ROLE_NAME =evil",
	"ROLE_NAME\t=evil",
	"FOO=x\n\tROLE_NAME=evil",
	`FOO="x" ROLE_NAME=evil`,
	"\rROLE_NAME=evil",
	"!ROLE_NAME=evil",
}

// bodyForm is one of the three ways the update helper reads its data.
type bodyForm struct {
	name  string
	build func(path, data string, typ int) req
}

var bodyForms = []bodyForm{
	{"raw", func(path, data string, typ int) req {
		if typ != 1 {
			path += fmt.Sprintf("?type=%d", typ)
		}
		return req{method: "PUT", path: path, body: data}
	}},
	{"form", func(path, data string, typ int) req {
		return req{method: "PUT", path: path, ctype: "application/x-www-form-urlencoded",
			body: "data=" + url.QueryEscape(data) + fmt.Sprintf("&type=%d", typ)}
	}},
	{"query", func(path, data string, typ int) req {
		return req{method: "PUT", path: path + "?data=" + url.QueryEscape(data) + fmt.Sprintf("&type=%d", typ)}
	}},
}

func TestRestrictedBypassSpellings(t *testing.T) {
	t.Parallel()
	const caller, sibling = 100, 101
	routes := []struct {
		name   string
		path   string
		target int
	}{
		{"PUT /vm", "/vm", caller},
		{"PUT /vms/:id (sibling)", fmt.Sprintf("/vms/%d", sibling), sibling},
	}
	for _, version := range []string{"7.4", "6.10"} {
		for _, rt := range routes {
			for _, f := range bodyForms {
				for _, sp := range bypassSpellings {
					t.Run(fmt.Sprintf("%s/%s/%s/%q", version, rt.name, f.name, sp), func(t *testing.T) {
						t.Parallel()
						h := runningService(t, version)
						r := f.build(rt.path, sp, 1)
						r.vm = caller
						if got := h.do(r); got.status != 200 {
							t.Fatalf("%q = %d %q, want 200 (the real server accepts it)", sp, got.status, got.body)
						}
						if ut := h.sim.UserTemplate(rt.target); ut["ROLE_NAME"] != "evil" || ut["SERVICE_ID"] != "1" {
							t.Errorf("after %q: ROLE_NAME=%q SERVICE_ID=%q, want evil and 1", sp, ut["ROLE_NAME"], ut["SERVICE_ID"])
						}
					})
				}
				for _, refused := range []struct{ data, key string }{
					{"ROLE_NAME=evil", "ROLE_NAME"},
					{"role_name=evil", "role_name"},
					{"SERVICE_ID=2", "SERVICE_ID"},
					{"Sched_Requirements=x", "Sched_Requirements"},
					{"A=1\nROLE_NAME=evil", "ROLE_NAME"},
				} {
					t.Run(fmt.Sprintf("%s/%s/%s/refused %q", version, rt.name, f.name, refused.data), func(t *testing.T) {
						t.Parallel()
						h := runningService(t, version)
						r := f.build(rt.path, refused.data, 1)
						r.vm = caller
						want := "Attribute (" + refused.key + ") cannot be modified"
						if got := h.do(r); got.status != 403 || got.body != want {
							t.Fatalf("%q = %d %q, want 403 %q", refused.data, got.status, got.body, want)
						}
						if ut := h.sim.UserTemplate(rt.target); ut["ROLE_NAME"] == "evil" || ut["SERVICE_ID"] != "1" || ut["A"] != "" {
							t.Errorf("a refused update changed the template: %v", ut)
						}
					})
				}
			}
		}
	}
}

// The erase form (type=2) has its own bypass: the name goes to Nokogiri's
// delete_element("USER_TEMPLATE/<name>"), and XPath skips blanks around a
// step, while the check compares the name with the blanks.
func TestRestrictedBypassErase(t *testing.T) {
	t.Parallel()
	const caller, sibling = 100, 101
	for _, version := range []string{"7.4", "6.10"} {
		for _, path := range []string{"/vm", fmt.Sprintf("/vms/%d", sibling)} {
			target := caller
			if path != "/vm" {
				target = sibling
			}
			for _, f := range bodyForms {
				for _, c := range []struct {
					data   string
					status int
					body   string
				}{
					{"\tROLE_NAME", 200, ""},
					{" ROLE_NAME", 200, ""},
					{"ROLE_NAME ", 200, ""},
					{"\rROLE_NAME", 200, ""},
					{"ROLE_NAME", 403, "Attribute (ROLE_NAME) cannot be deleted"},
					{"role_name", 403, "Attribute (role_name) cannot be deleted"},
				} {
					t.Run(fmt.Sprintf("%s%s/%s/%q", version, path, f.name, c.data), func(t *testing.T) {
						t.Parallel()
						h := runningService(t, version)
						r := f.build(path, c.data, 2)
						r.vm = caller
						got := h.do(r)
						if got.status != c.status || got.body != c.body {
							t.Fatalf("erase %q = %d %q, want %d %q", c.data, got.status, got.body, c.status, c.body)
						}
						_, has := h.sim.UserTemplate(target)["ROLE_NAME"]
						if has != (c.status != 200) {
							t.Errorf("erase %q answered %d; ROLE_NAME still there: %v", c.data, got.status, has)
						}
					})
				}
			}
		}
	}
}

// A sibling can write and erase keys in another VM's USER_TEMPLATE, act on
// it (every action but reboot), scale a role, and read every sibling's
// whole VM document, CONTEXT included.
func TestSiblingPowers(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"7.4", "6.10"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			h := runningService(t, version)
			if r := h.putForm(100, "/vms/101", "ONEGATE_K8S_TOKEN=forged", 1); r.status != 200 {
				t.Fatalf("sibling write = %d %q", r.status, r.body)
			}
			if ut := h.sim.UserTemplate(101); ut["ONEGATE_K8S_TOKEN"] != "forged" {
				t.Errorf("sibling write not stored: %v", ut)
			}
			if r := h.putForm(100, "/vms/101", "ONEGATE_K8S_TOKEN", 2); r.status != 200 {
				t.Fatalf("sibling erase = %d %q", r.status, r.body)
			}
			if _, ok := h.sim.UserTemplate(101)["ONEGATE_K8S_TOKEN"]; ok {
				t.Error("sibling erase left the key")
			}
			act := func(vm int, perform string) resp {
				return h.do(req{method: "POST", path: fmt.Sprintf("/vms/%d/action", vm), vm: 100,
					body: `{"action":{"perform":"` + perform + `"}}`, ctype: "application/json"})
			}
			if r := act(101, "reboot"); r.status != 403 || r.body != "Action (reboot) is not allowed on this resource" {
				t.Errorf("reboot = %d %q, want 403", r.status, r.body)
			}
			// attachdisk on a sibling: TestDiskHotplug (it needs an image).
			for _, a := range []string{"poweroff", "resume", "undeploy"} {
				if r := act(101, a); r.status != 204 {
					t.Errorf("%s = %d %q, want 204", a, r.status, r.body)
				}
			}
			if r := h.do(req{method: "POST", path: "/vms/101/action", vm: 100,
				body: `{"action":{"perform":"rename","params":"mine"}}`, ctype: "application/json"}); r.status != 204 {
				t.Errorf("rename = %d %q, want 204", r.status, r.body)
			}
			if r := act(102, "terminate"); r.status != 204 {
				t.Fatalf("terminate = %d %q", r.status, r.body)
			}
			if _, ok := h.sim.VM(102); ok {
				t.Error("a sibling's terminate left the VM")
			}
			if r := h.do(req{method: "PUT", path: "/service/role/worker", vm: 100, body: `{"cardinality":4}`, ctype: "application/json"}); r.status != 200 {
				t.Fatalf("scale = %d %q", r.status, r.body)
			}
			if n := len(h.sim.RoleVMs(1, "worker")); n != 4 {
				t.Errorf("%d workers after a sibling scaled to 4", n)
			}
			r := h.do(req{method: "GET", path: "/service?extended=true", vm: 101})
			if r.status != 200 {
				t.Fatalf("extended = %d %q", r.status, r.body)
			}
			var doc struct {
				SERVICE struct {
					Roles []struct {
						Nodes []struct {
							VMInfo struct {
								VM struct {
									ID       string
									TEMPLATE struct {
										CONTEXT map[string]any
									}
									USER_TEMPLATE map[string]any
								}
							} `json:"vm_info"`
						} `json:"nodes"`
					} `json:"roles"`
				}
			}
			if err := json.Unmarshal([]byte(r.body), &doc); err != nil {
				t.Fatal(err)
			}
			seen := 0
			for _, role := range doc.SERVICE.Roles {
				for _, n := range role.Nodes {
					seen++
					c := n.VMInfo.VM.TEMPLATE.CONTEXT
					if c["ONEGATE_ENDPOINT"] == nil || c["TOKEN"] == nil || n.VMInfo.VM.USER_TEMPLATE["ROLE_NAME"] == nil {
						t.Errorf("VM %s: CONTEXT or USER_TEMPLATE missing from the extended document: %v", n.VMInfo.VM.ID, c)
					}
				}
			}
			if seen != 5 {
				t.Errorf("extended document lists %d VMs, want 5", seen)
			}
		})
	}
}

func TestHostileSiblingActor(t *testing.T) {
	t.Parallel()
	h := runningService(t, "7.4")
	other := h.instantiate(simpleTemplateV("7.4", "none", false, 1, 0, ""), "") // VM 103, same owner
	if other != 2 {
		t.Fatalf("second service is %d", other)
	}
	evil, err := h.sim.Hostile(102)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.sim.Hostile(999); !errors.Is(err, ErrUnknownVM) {
		t.Errorf("Hostile(999) = %v, want ErrUnknownVM", err)
	}

	if err := evil.WriteSibling(100, "ONEGATE_K8S_MASTER", "203.0.113.9"); err != nil {
		t.Fatal(err)
	}
	if got := h.sim.UserTemplate(100)["ONEGATE_K8S_MASTER"]; got != "203.0.113.9" {
		t.Errorf("sibling write: master's ONEGATE_K8S_MASTER = %q", got)
	}
	if err := evil.EraseSibling(100, "ONEGATE_K8S_MASTER"); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.sim.UserTemplate(100)["ONEGATE_K8S_MASTER"]; ok {
		t.Error("sibling erase left the key")
	}
	if err := evil.BypassSet("ROLE_NAME", "master"); err != nil {
		t.Fatal(err)
	}
	if got := h.sim.UserTemplate(102)["ROLE_NAME"]; got != "master" {
		t.Errorf("own ROLE_NAME after the bypass = %q", got)
	}
	if err := evil.BypassSetSibling(101, "ROLE_NAME", "master"); err != nil {
		t.Fatal(err)
	}
	if got := h.sim.UserTemplate(101)["ROLE_NAME"]; got != "master" {
		t.Errorf("sibling's ROLE_NAME after the bypass = %q", got)
	}
	var ref *Refused
	if err := evil.Put(-1, "ROLE_NAME=x", 1); !errors.As(err, &ref) || ref.Status != 403 || ref.Route != "PUT /vm" {
		t.Errorf("plain ROLE_NAME = %v, want a 403 Refused", err)
	}

	views, err := evil.ReadExtended()
	if err != nil {
		t.Fatal(err)
	}
	if len(views) != 3 {
		t.Fatalf("%d VMs in the extended service, want 3", len(views))
	}
	for _, v := range views {
		if v.Context["ONEGATE_ENDPOINT"] == "" || v.UserTemplate["SERVICE_ID"] != "1" {
			t.Errorf("VM %d (%s): context %v, user template %v", v.ID, v.Role, v.Context, v.UserTemplate)
		}
	}

	if err := evil.Action(101, "reboot"); !errors.As(err, &ref) || ref.Status != 403 {
		t.Errorf("reboot = %v, want 403", err)
	}
	if err := evil.Action(101, "poweroff"); err != nil {
		t.Errorf("poweroff = %v", err)
	}
	// A powered-off VM puts the service in WARNING, where OneFlow refuses
	// every scale; resuming it ends the WARNING (running_wd_cb).
	if err := evil.Scale("worker", 3); !errors.As(err, &ref) || ref.Status != 400 {
		t.Errorf("scale in WARNING = %v, want a 400 Refused", err)
	}
	if err := evil.Action(101, "resume"); err != nil {
		t.Errorf("resume = %v", err)
	}
	if err := evil.Scale("worker", 3); err != nil {
		t.Fatal(err)
	}
	if n := len(h.sim.RoleVMs(1, "worker")); n != 3 {
		t.Errorf("%d workers after the hostile scale to 3", n)
	}
	if err := evil.Action(101, "terminate"); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.sim.VM(101); ok {
		t.Error("terminated sibling still there")
	}

	// Another service of the same owner is out of reach, until the actor
	// rewrites its own SERVICE_ID.
	if err := evil.WriteSibling(103, "X", "1"); !errors.As(err, &ref) || ref.Status != 400 {
		t.Errorf("write into another service = %v, want 400", err)
	}
	if err := evil.BypassSet("SERVICE_ID", "2"); err != nil {
		t.Fatal(err)
	}
	if err := evil.WriteSibling(103, "X", "1"); err != nil {
		t.Errorf("after rewriting its SERVICE_ID: %v", err)
	}
	if got := h.sim.UserTemplate(103)["X"]; got != "1" {
		t.Errorf("VM 103's X = %q", got)
	}

	remove := h.sim.InjectFault(Fault{VMs: []int{102}, Kind: FaultDrop})
	if err := evil.WriteSibling(100, "X", "1"); !errors.Is(err, errDropped) {
		t.Errorf("with a drop fault: %v", err)
	}
	remove()
}

func TestHardenedConf(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"7.4", "6.10"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, Options{Version: version, Cooldown: -1, Deny: HardenedDeny()})
			h.instantiate(simpleTemplateV(version, "none", false, 1, 2, ""), "")
			evil, err := h.sim.Hostile(102)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name string
				err  error
				body string
			}{
				{"write", evil.WriteSibling(100, "X", "1"), "Action (update_by_id) on resource (vm) not supported"},
				{"erase", evil.EraseSibling(100, "ROLE_NAME"), "Action (update_by_id) on resource (vm) not supported"},
				{"bypass on a sibling", evil.BypassSetSibling(100, "ROLE_NAME", "x"), "Action (update_by_id) on resource (vm) not supported"},
				{"by-id on itself", evil.Put(102, "X=1", 1), "Action (update_by_id) on resource (vm) not supported"},
				{"action", evil.Action(100, "terminate"), "Action (action_by_id) on resource (vm) not supported"},
				{"scale", evil.Scale("worker", 5), "Action (change_cardinality) on resource (service) not supported"},
			} {
				var ref *Refused
				if !errors.As(c.err, &ref) || ref.Status != 403 || ref.Body != c.body {
					t.Errorf("%s = %v, want 403 %q", c.name, c.err, c.body)
				}
			}
			if ut := h.sim.UserTemplate(100); ut["X"] != "" || ut["ROLE_NAME"] != "master" {
				t.Errorf("the master's template changed: %v", ut)
			}
			if len(h.sim.VMs()) != 3 {
				t.Errorf("%d VMs, want 3", len(h.sim.VMs()))
			}
			// What hardening leaves: reads and the bypass on one's own template.
			if views, err := evil.ReadExtended(); err != nil || len(views) != 3 {
				t.Errorf("extended read = %d VMs, %v", len(views), err)
			}
			if err := evil.BypassSet("ROLE_NAME", "master"); err != nil {
				t.Errorf("bypass on its own template = %v", err)
			}
			if got := h.sim.UserTemplate(102)["ROLE_NAME"]; got != "master" {
				t.Errorf("own ROLE_NAME = %q", got)
			}
		})
	}
}
