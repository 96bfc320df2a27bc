package flow

import (
	"fmt"
	"strings"
	"testing"
)

// TestValidatePolicyLint: hand-written policies in a service template, and
// the same in a spec, get the lint's findings at the policy's path.
func TestValidatePolicyLint(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		role   string // replaces the worker's cooldown and policies in ok7
		want   []string
		absent string
	}{
		{name: "clean", role: `"cooldown":30,"elasticity_policies":[{"type":"CHANGE","adjust":1,"expression":"(CPU > 80 && MEMORY > 50) || CPU > 95"}]`},
		{name: "mixed", role: `"elasticity_policies":[{"type":"CHANGE","adjust":1,"expression":"CPU > 80 && MEMORY > 50 || CPU > 95"}]`,
			want: []string{"warning $.roles[1].elasticity_policies[0].expression: && and || without parentheses"}},
		{name: "not over a missing attribute", role: `"elasticity_policies":[{"type":"CHANGE","adjust":1,"expression":"!(READY_PODS > 3)"}]`,
			want: []string{"warning $.roles[1].elasticity_policies[0].expression: '!' over READY_PODS"}},
		{name: "not scoped by parentheses", role: `"elasticity_policies":[{"type":"CHANGE","adjust":1,"expression":"!(CPU > 80) && MEMORY > 1"}]`,
			want: []string{"error $.roles[1].elasticity_policies[0].expression: '!' negates everything after it"}},
		{name: "constant", role: `"elasticity_policies":[{"type":"CHANGE","adjust":1,"expression":"1 < 2"}]`,
			want: []string{"error $.roles[1].elasticity_policies[0].expression: 1 < 2 compares two numbers"}},
		{name: "policy cooldown over the default", role: `"elasticity_policies":[{"type":"CHANGE","adjust":1,"expression":"CPU > 80","cooldown":600}]`,
			want: []string{"warning $.roles[1].elasticity_policies[0].cooldown: when this policy fires, OneFlow writes its cooldown (600 s) over OneFlow's default 300 s"}},
		{name: "policy cooldown over the role's", role: `"cooldown":30,"elasticity_policies":[{"type":"CHANGE","adjust":1,"expression":"CPU > 80","cooldown":300}]`,
			want: []string{"over the role's 30 s and keeps it"}},
		{name: "same cooldown", role: `"cooldown":60,"elasticity_policies":[{"type":"CHANGE","adjust":1,"expression":"CPU > 80","cooldown":60}]`},
		{name: "scale down", role: `"elasticity_policies":[{"type":"PERCENTAGE_CHANGE","adjust":-20,"expression":"CPU < 10"}],"scheduled_policies":[{"type":"CHANGE","adjust":-1,"recurrence":"0 20 * * *"},{"type":"CARDINALITY","adjust":1,"recurrence":"0 21 * * *"}]`,
			want: []string{"warning $.roles[1].elasticity_policies[0]: scales down: OneFlow removes the role's oldest VMs",
				"warning $.roles[1].scheduled_policies[0]: scales down"},
			absent: "scheduled_policies[1]"},
		{name: "bad expression: one error", role: `"elasticity_policies":[{"type":"CHANGE","adjust":1,"expression":"1 < "}]`,
			want: []string{"error $.roles[1].elasticity_policies[0].expression: expression \"1 < \" does not parse"}},
	}
	const policies = `"elasticity_policies":[{"type":"CHANGE","adjust":1,"expression":"CPU > 80","period_number":3,"period":60}]`
	for _, c := range cases {
		for _, v := range []OneFlowVersion{Version7, Version6} {
			doc := mustReplace(t, ok7, policies, c.role)
			if v == Version6 {
				doc = mustReplace(t, ok6, `"scheduled_policies":[{"type":"CARDINALITY","adjust":3,"recurrence":"0 8 * * 1-5"}]`, c.role)
			}
			ps := withoutSingleMaster(Validate([]byte(doc), ValidateOptions{}))
			var got []string
			for _, p := range ps {
				got = append(got, p.String())
			}
			all := strings.Join(got, "\n")
			if len(got) != len(c.want) {
				t.Errorf("%s/%d: %d problems, want %d:\n%s", c.name, v, len(got), len(c.want), all)
				continue
			}
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("%s/%d: no %q in\n%s", c.name, v, w, all)
				}
			}
			if c.absent != "" && strings.Contains(all, c.absent) {
				t.Errorf("%s/%d: %q in\n%s", c.name, v, c.absent, all)
			}
		}
	}
}

func TestCheckSpecPolicyLint(t *testing.T) {
	t.Parallel()
	s := DefaultSpec()
	s.Worker.ElasticityPolicies = []ElasticityPolicy{
		{Type: "CHANGE", Adjust: 1, Expression: "A > 1 && B > 1 || C > 1"},
		{Type: "CHANGE", Adjust: -1, Expression: "CPU < 5", Cooldown: ptr(120)},
		{Type: "CHANGE", Adjust: 1, Expression: "2 > 1"},
	}
	var got []string
	for _, p := range CheckSpec(s) {
		got = append(got, p.String())
	}
	all := strings.Join(got, "\n")
	for _, w := range []string{
		"warning worker.elasticityPolicies[0].expression: && and || without parentheses",
		"warning worker.elasticityPolicies[1]: scales down",
		fmt.Sprintf("warning worker.elasticityPolicies[1].cooldown: when this policy fires, OneFlow writes its cooldown (120 s) over the role's %d s", DefaultCooldown),
		"error worker.elasticityPolicies[2].expression: 2 > 1 compares two numbers",
	} {
		if !strings.Contains(all, w) {
			t.Errorf("no %q in\n%s", w, all)
		}
	}
	if _, err := RenderService(s, Version7); err == nil {
		t.Error("a spec with a constant expression rendered")
	}
}

func TestValidateAutoscaleInput(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":     "",
		"1:5":  "",
		"2:4":  "",
		"0:5":  "warning $.user_inputs.ONEAPP_K8S_AUTOSCALE: ONEAPP_K8S_AUTOSCALE 0:5 reaches beyond the worker role's min_vms 1 and max_vms 5",
		"1:9":  "reaches beyond",
		"9":    "error $.user_inputs.ONEAPP_K8S_AUTOSCALE: ONEAPP_K8S_AUTOSCALE \"9\": want min:max",
		"x:2:": "error",
	} {
		doc := mustReplace(t, ok7, `"user_inputs":{`, `"user_inputs":{"ONEAPP_K8S_AUTOSCALE":"O|text|bounds||`+in+`",`)
		var got []string
		for _, p := range withoutSingleMaster(Validate([]byte(doc), ValidateOptions{})) {
			got = append(got, p.String())
		}
		all := strings.Join(got, "\n")
		if want == "" && all != "" || want != "" && (len(got) != 1 || !strings.Contains(all, want)) {
			t.Errorf("%q: %s, want %q", in, all, want)
		}
	}
}
