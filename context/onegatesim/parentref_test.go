package onegatesim

import (
	"encoding/json"
	"fmt"
	"maps"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow"
)

// TestParentRefPaths: ${role.xpath} as Role#evaluate reads it (release-7.4.0
// and release-6.10.5 src/flow/lib/models/role.rb): "//" + the upcased path
// on each parent VM's XML in node order, the first VM with a node there
// giving its node set's text, an empty one included.
func TestParentRefPaths(t *testing.T) {
	exprs := map[string]string{
		"VM_ID":      "${master.vm.id}",
		"VM_NAME":    "${master.vm.name}",
		"ALL_NAMES":  "${master.name}", // //NAME: the VM's and its NIC's
		"ALL_IDS":    "${master.id}",   // //ID: the VM's and its SCHED_ACTION's
		"IP":         "${master.template.context.eth0_ip}",
		"NOT_PARENT": "${other.vm.id}",
		"NO_PATH":    "${master}",
		"MISSING":    "${master.user_template.nosuch}",
		"SECOND":     "${master.user_template.only_second}",
		"EMPTY":      "${master.user_template.empty_first}",
	}
	ctx, _ := json.Marshal(exprs)
	h := newHarness(t, Options{})
	svc := h.instantiate(fmt.Sprintf(`{"name":"svc","deployment":"straight","ready_status_gate":true,"roles":[
	 {"name":"master","type":"vm","template_id":1,"cardinality":2},
	 {"name":"other","type":"vm","template_id":1,"cardinality":1},
	 {"name":"worker","type":"vm","template_id":2,"cardinality":1,"parents":["master"],
	  "template_contents":{"CONTEXT":%s}}]}`, ctx), "")
	for vm, data := range map[int]string{
		100: "SCHED_ACTION=[ID=\"7\",ACTION=\"hold\",TIME=\"1\"]\nEMPTY_FIRST=\"\"\nREADY=YES",
		101: "ONLY_SECOND=\"second\"\nEMPTY_FIRST=\"late\"\nREADY=YES",
	} {
		if r := h.putForm(vm, "/vm", data, 1); r.status != 200 {
			t.Fatalf("PUT from VM %d: %d %s", vm, r.status, r.body)
		}
	}
	if ut := h.sim.UserTemplate(100); ut["EMPTY_FIRST"] != "" {
		t.Fatalf("master 100's user template: %v", ut)
	} else if _, ok := ut["EMPTY_FIRST"]; !ok {
		t.Skip("the simulator drops empty attributes; EMPTY cannot be checked")
	}
	if err := h.sim.WaitRoleVMs(ctxTimeout(t), svc, "worker", 1); err != nil {
		t.Fatal(err)
	}
	master, _ := h.sim.VM(100)
	want := map[string]string{
		"VM_ID":      "100",
		"VM_NAME":    "master_0_(service_1)",
		"ALL_NAMES":  "master_0_(service_1)NIC0",
		"ALL_IDS":    "1007",
		"IP":         master.IP.String(),
		"NOT_PARENT": "",
		"NO_PATH":    "",
		"MISSING":    "",
		"SECOND":     "second",
		"EMPTY":      "",
	}
	worker := h.sim.RoleVMs(svc, "worker")[0]
	got := h.sim.Context(worker.ID)
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %s: %q, want %q", k, exprs[k], got[k], w)
		}
	}
}

// TestMasterVMIDFromFlow: a worker of flow's straight-deployment service
// gets the master's VM ID in CONTEXT, in 7.x through template_contents and
// in 6.x through a top-level attribute its VM template's CONTEXT references
// (TemplateContexts: no copying of 6.x attributes). The master's CONTEXT
// references it too and gets "", as oned writes nothing for an attribute
// the VM lacks. With deployment "none" no VM gets the key.
func TestMasterVMIDFromFlow(t *testing.T) {
	for _, c := range []struct {
		version    string
		model      flow.OneFlowVersion
		deployment string
	}{
		{"7.4", flow.Version7, "straight"},
		{"6.10", flow.Version6, "straight"},
		{"7.4", flow.Version7, "none"},
		{"6.10", flow.Version6, "none"},
	} {
		t.Run(c.version+" "+c.deployment, func(t *testing.T) {
			h, svc := flowService(t, c.version, c.model, c.deployment, flow.RoleWorker, nil)
			masters := h.sim.RoleVMs(svc, flow.RoleMaster)
			if len(masters) != 1 {
				t.Fatalf("masters: %v", masters)
			}
			if c.deployment == "straight" {
				h.ready(masters[0].ID)
			}
			if err := h.sim.WaitRoleVMs(ctxTimeout(t), svc, flow.RoleWorker, 2); err != nil {
				t.Fatal(err)
			}
			want := ""
			if c.deployment == "straight" {
				want = fmt.Sprint(masters[0].ID)
			}
			for _, w := range h.sim.RoleVMs(svc, flow.RoleWorker) {
				got, ok := h.sim.Context(w.ID)[vmcontext.KeyMasterVMID]
				if got != want || !ok && want != "" {
					t.Errorf("worker %d: %s = %q (set %v), want %q", w.ID, vmcontext.KeyMasterVMID, got, ok, want)
				}
				if ok && want == "" {
					t.Errorf("worker %d: %s set (%q) with deployment none", w.ID, vmcontext.KeyMasterVMID, got)
				}
			}
			if got := h.sim.Context(masters[0].ID)[vmcontext.KeyMasterVMID]; got != "" {
				t.Errorf("master: %s = %q, want empty", vmcontext.KeyMasterVMID, got)
			}
		})
	}
	// 6.x: the attribute alone does not reach CONTEXT; the VM template's
	// reference does.
	t.Run("6.10 without the reference", func(t *testing.T) {
		h, svc := flowService(t, "6.10", flow.Version6, "straight", flow.RoleWorker, func(ctx map[string]string) {
			delete(ctx, vmcontext.KeyMasterVMID)
		})
		h.ready(h.sim.RoleVMs(svc, flow.RoleMaster)[0].ID)
		if err := h.sim.WaitRoleVMs(ctxTimeout(t), svc, flow.RoleWorker, 2); err != nil {
			t.Fatal(err)
		}
		w := h.sim.RoleVMs(svc, flow.RoleWorker)[0]
		if got, ok := h.sim.Context(w.ID)[vmcontext.KeyMasterVMID]; ok {
			t.Errorf("%s = %q in CONTEXT without a reference", vmcontext.KeyMasterVMID, got)
		}
		if got := h.sim.UserTemplate(w.ID)[vmcontext.KeyMasterVMID]; got == "" {
			t.Errorf("%s missing from the user template", vmcontext.KeyMasterVMID)
		}
	})
	// The marketplace appliance's one VM template is the master's: its
	// reference serves the workers too.
	t.Run("6.10 marketplace, the master's template for both roles", func(t *testing.T) {
		h, svc := flowService(t, "6.10", flow.Version6, "straight", flow.RoleMaster, nil)
		m := h.sim.RoleVMs(svc, flow.RoleMaster)[0]
		h.ready(m.ID)
		if err := h.sim.WaitRoleVMs(ctxTimeout(t), svc, flow.RoleWorker, 2); err != nil {
			t.Fatal(err)
		}
		for _, w := range h.sim.RoleVMs(svc, flow.RoleWorker) {
			if got := h.sim.Context(w.ID)[vmcontext.KeyMasterVMID]; got != fmt.Sprint(m.ID) {
				t.Errorf("worker %d: %s = %q, want %d", w.ID, vmcontext.KeyMasterVMID, got, m.ID)
			}
		}
	})
}

// flowService instantiates flow's default cluster (deployment, OneFlow
// from flow.RenderVMTemplate (the worker's from workerTmpl's template, then
// editWorker when set).
// from flow.RenderVMTemplate (the worker's from workerTmpl's template).
func flowService(t *testing.T, version string, model flow.OneFlowVersion, deployment, workerTmpl string, editWorker func(map[string]string)) (*harness, int) {
	t.Helper()
	const masterTmplID, workerTmplID = 11, 12
	spec := flow.DefaultSpec()
	spec.Service.Deployment = deployment
	spec.Master.TemplateID = ptrInt(masterTmplID)
	spec.Worker.TemplateID = ptrInt(workerTmplID)
	contexts := map[int]map[string]string{}
	for id, role := range map[int]string{masterTmplID: flow.RoleMaster, workerTmplID: workerTmpl} {
		text, err := flow.RenderVMTemplate(spec, role)
		if err != nil {
			t.Fatal(err)
		}
		attrs, err := parseTemplate(text)
		if err != nil {
			t.Fatalf("parsing the %s VM template: %v\n%s", role, err, text)
		}
		a, ok := lookup(attrs, "CONTEXT")
		if !ok || !a.isVector() {
			t.Fatalf("%s VM template without CONTEXT:\n%s", role, text)
		}
		contexts[id] = maps.Clone(a.vector)
		if id == workerTmplID && editWorker != nil {
			editWorker(contexts[id])
		}
	}
	tmpl, err := flow.RenderService(spec, model)
	if err != nil {
		t.Fatal(err)
	}
	inputs, err := InputDefaults(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	key := "user_inputs_values"
	if model == flow.Version6 {
		key = "custom_attrs_values"
	}
	merge, err := json.Marshal(map[string]any{
		key:               inputs,
		"networks_values": []map[string]any{{spec.Network.Name: map[string]string{"id": "0"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Options{Version: version, TemplateContexts: contexts})
	return h, h.instantiate(string(tmpl), string(merge))
}

func ptrInt(n int) *int { return &n }
