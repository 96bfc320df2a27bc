package flow

import (
	"strings"
	"testing"
)

// TestValidateEmptyRoles6: OneFlow 6.10.5 accepts "roles": [] (an array is
// all its schema asks; extra keys such as 7.x's user_inputs are allowed and
// ignored), so --oneflow 6 must not call such a document a 7.x one; it
// warns that nothing deploys and that the 7.x keys are ignored.
func TestValidateEmptyRoles6(t *testing.T) {
	t.Parallel()
	render7 := func() string {
		doc, err := RenderService(DefaultSpec(), Version7)
		if err != nil {
			t.Fatal(err)
		}
		s := string(doc)
		i := strings.Index(s, `"roles": [`)
		if i < 0 {
			t.Fatalf("no roles in %s", s)
		}
		return s[:i] + `"roles": []}`
	}()
	cases := []struct {
		name string
		doc  string
		v    OneFlowVersion
		want []string // problems expected (fragments); no others may be errors
		not  string   // a fragment no problem may hold
	}{
		{"bare", `{"name":"k","roles":[]}`, Version6, []string{"warning $.roles: no roles: the service deploys nothing"}, "7.x document"},
		{"bare auto", `{"name":"k","roles":[]}`, VersionAuto, []string{"warning $.roles: no roles"}, "7.x document"},
		{"bare 7", `{"name":"k","roles":[]}`, Version7, []string{"warning $.roles: no roles"}, "7.x document"},
		{"service user inputs", `{"name":"k","roles":[],"user_inputs":{"A":"O|text|a||x"},"user_inputs_values":{"A":"y"}}`, Version6,
			[]string{
				"warning $.roles: no roles",
				"warning $.user_inputs: a 7.x key, which OneFlow 6.x ignores (its user inputs are custom_attrs)",
				"warning $.user_inputs_values: a 7.x key, which OneFlow 6.x ignores (its user inputs are custom_attrs_values)",
			}, "7.x document"},
		{"rendered 7 without roles", render7, Version6, []string{"warning $.roles: no roles", "warning $.user_inputs: a 7.x key"}, "7.x document"},
		{"custom_attrs", `{"name":"k","roles":[],"custom_attrs":{"A":"O|text|a||x"}}`, Version6, []string{"warning $.roles: no roles"}, "7.x"},
		{"7.x role is still 7.x", `{"name":"k","roles":[{"name":"a","type":"vm","template_id":1}]}`, Version6,
			[]string{"error $: a 7.x document", "error $.roles[0].vm_template: missing"}, "no roles"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ps := Validate([]byte(tc.doc), ValidateOptions{Version: tc.v})
			var lines []string
			for _, p := range ps {
				lines = append(lines, p.String())
			}
			all := strings.Join(lines, "\n")
			errs := 0
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("want %q in:\n%s", w, all)
				}
				if strings.HasPrefix(w, "error") {
					errs++
				}
			}
			if n := strings.Count("\n"+all, "\nerror "); n > errs {
				t.Errorf("%d errors, want %d:\n%s", n, errs, all)
			}
			if strings.Contains(all, tc.not) {
				t.Errorf("%q in:\n%s", tc.not, all)
			}
		})
	}
}
