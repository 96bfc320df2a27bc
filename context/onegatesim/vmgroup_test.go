package onegatesim

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/onekube/onekube/flow"
)

// flow's renders with host anti-affinity and an explicit cooldown go
// through the 6.10 and 7.4 data models as oned and OneFlow take them: the
// masters' VMGROUP = [VMGROUP_NAME, ROLE] lands in each master VM's
// TEMPLATE (a system attribute: VirtualMachine::get_vmgroup moves it out
// of the user template), the workers get none, and the role keeps the
// rendered cooldown instead of :default_cooldown:.
func TestFlowRenderVMGroupAndCooldown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version string
		model   flow.OneFlowVersion
	}{{"6.10", flow.Version6}, {"7.4", flow.Version7}} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			spec := flow.DefaultSpec()
			spec.Master.Count = ptrInt(3)
			spec.Master.TemplateID, spec.Worker.TemplateID = ptrInt(11), ptrInt(12)
			tmpl, err := flow.RenderService(spec, tc.model)
			if err != nil {
				t.Fatal(err)
			}
			inputs, err := InputDefaults(tmpl)
			if err != nil {
				t.Fatal(err)
			}
			key := "user_inputs_values"
			if tc.model == flow.Version6 {
				key = "custom_attrs_values"
			}
			merge, _ := json.Marshal(map[string]any{
				key:               inputs,
				"networks_values": []map[string]any{{spec.Network.Name: map[string]string{"id": "0"}}},
			})
			h := newHarness(t, Options{Version: tc.version})
			svc := h.instantiate(string(tmpl), string(merge))
			masters := h.sim.RoleVMs(svc, flow.RoleMaster)
			if len(masters) != 3 {
				t.Fatalf("%d masters", len(masters))
			}
			h.sim.mu.Lock()
			defer h.sim.mu.Unlock()
			for _, r := range h.sim.services[svc].roles {
				if r.spec.cooldown != flow.DefaultCooldown*time.Second {
					t.Errorf("role %s cooldown %v, want %ds", r.spec.name, r.spec.cooldown, flow.DefaultCooldown)
				}
				for _, v := range r.nodes {
					g, ok := lookup(v.system, "VMGROUP")
					_, inUser := lookup(v.user, "VMGROUP")
					switch {
					case inUser:
						t.Errorf("VM %d: VMGROUP in the user template", v.id)
					case r.spec.name == flow.RoleWorker && ok:
						t.Errorf("worker VM %d in a VM group: %v", v.id, g.vector)
					case r.spec.name == flow.RoleMaster && (!ok || g.vector["VMGROUP_NAME"] != spec.VMGroupName() || g.vector["ROLE"] != flow.RoleMaster):
						t.Errorf("master VM %d: VMGROUP %v (present %v)", v.id, g.vector, ok)
					}
				}
			}
		})
	}
}
