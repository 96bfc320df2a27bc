package flow

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestValidateModel: what each server does with a document of the other
// data model, or of both.
func TestValidateModel(t *testing.T) {
	t.Parallel()
	r7 := func(old, new string) string { return mustReplace(t, ok7, old, new) }
	r6 := func(old, new string) string { return mustReplace(t, ok6, old, new) }
	exported := strings.ReplaceAll(ok7, `"type":"vm","template_id":`, `"vm_template":40,"type":"vm","template_id":`)
	cases := []struct {
		name string
		doc  string
		v    OneFlowVersion
		want []string // every line must be there; no other error
	}{
		{"7.x as 6", ok7, Version6, []string{
			"error $: a 7.x document (roles with type, template_id or template_contents): OneFlow 6.x requires vm_template and ignores the 7.x keys (NICs, sizes, user inputs); render it with --oneflow 6",
			"error $.roles[0].vm_template: missing",
			"error $.roles[1].vm_template: missing",
		}},
		{"exported", exported, VersionAuto, []string{
			"warning $: the marketplace-exported form of a 7.x template (every role also has vm_template): the 7.x server takes it as a 6.x document and converts it, each role's template_id becoming its vm_template",
		}},
		{"exported as 7", exported, Version7, []string{"warning $: the marketplace-exported form"}},
		{"exported as 6", exported, Version6, []string{"error $: a 7.x document"}},
		{"exported vr", strings.Replace(exported, `"type":"vm"`, `"type":"vr"`, 1), Version7, []string{
			`warning $.roles[0].type: the conversion makes this virtual router role a VM role ("type": "vm")`,
		}},
		{"exported string id", strings.Replace(exported, `"vm_template":40`, `"vm_template":"0x1A"`, 1), Version7, []string{
			`warning $.roles[0].vm_template: "0x1A" is not a number: the 7.x server converts it to template_id 0`,
		}},
		{"exported null id", strings.Replace(exported, `"vm_template":40`, `"vm_template":null`, 1), Version7, []string{
			"warning $.roles[0].vm_template: null: the 7.x server converts it to template_id 0",
		}},
		{"exported bool id", strings.Replace(exported, `"vm_template":40`, `"vm_template":true`, 1), Version7, []string{
			"error $.roles[0].vm_template: want the VM template ID (an integer), got a boolean: the 7.x server cannot convert it",
		}},
		{"exported negative id", strings.Replace(exported, `"vm_template":40`, `"vm_template":-1`, 1), Version7, []string{
			"warning $.roles[0].template_id: -1 is no VM template",
		}},
		{"6.x to 7 without vm_template", r6(`"vm_template":1,`, ``), Version7, []string{
			"warning $.roles[0].vm_template: missing: the 7.x server converts this role with template_id 0",
		}},
		{"6.x to 7 text vm_template", r6(`"vm_template":1,`, `"vm_template":"12abc",`), Version7, []string{
			`warning $.roles[0].vm_template: "12abc" is not a number: the 7.x server converts it to template_id 12`,
		}},
		{"6.x to 7 float vm_template", r6(`"vm_template":1,`, `"vm_template":2.7,`), Version7, []string{
			"warning $.roles[0].vm_template: 2.7 is not an integer: the 7.x server converts it to template_id 2",
		}},
		{"6.x to 6 without vm_template", r6(`"vm_template":1,`, ``), Version6, []string{
			"error $.roles[0].vm_template: missing",
		}},
		{"6.x null vm_template is old format", r6(`"vm_template":1,`, `"vm_template":null,`), Version7, []string{
			"warning $.roles[0].vm_template: null: the 7.x server converts it to template_id 0",
		}},
		{"stray vm_template is ignored", r7(`"template_id":2,`, `"template_id":2,"vm_template":2,`), VersionAuto, []string{
			"warning $.roles[1].vm_template: ignored: the 7.x server converts a document only when every role has vm_template",
		}},
		{"mixed contents stay an error", r7(`"template_id":2,`, `"template_id":2,"vm_template_contents":"CPU=1",`), VersionAuto, []string{
			"error $.roles[1]: mixes 6.x keys (vm_template_contents) and 7.x keys",
			"error $.roles: 6.x roles ($.roles[1]) next to 7.x roles ($.roles[0])",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var lines []string
			for _, p := range Validate([]byte(tc.doc), ValidateOptions{Version: tc.v}) {
				lines = append(lines, p.String())
			}
			for _, w := range tc.want {
				if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, w) }) {
					t.Errorf("no line starting %q in:\n%s", w, strings.Join(lines, "\n"))
				}
			}
			for _, l := range lines {
				if strings.HasPrefix(l, "error") && !slices.ContainsFunc(tc.want, func(w string) bool { return strings.HasPrefix(l, w) }) {
					t.Errorf("unexpected %s", l)
				}
			}
		})
	}
}

// TestValidateExportedRendered: our own 7.x template, as the marketplace
// export registers it (vm_template added to every role), validates with
// warnings only, and the exported ID is the one checked.
func TestValidateExportedRendered(t *testing.T) {
	t.Parallel()
	doc, err := RenderService(DefaultSpec(), Version7)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	for i, r := range m["roles"].([]any) {
		r.(map[string]any)["vm_template"] = 30 + i
	}
	exported, _ := json.Marshal(m)
	ps := Validate(exported, ValidateOptions{})
	if HasErrors(ps) {
		t.Fatalf("errors: %v", ps)
	}
	for _, p := range ps {
		if strings.Contains(p.Message, "-1 is no VM template") {
			t.Errorf("the unset -1 was checked, not the exported ID: %v", p)
		}
	}
	if len(ps) == 0 || ps[0].Path != "$" || !strings.Contains(ps[0].Message, "marketplace-exported") {
		t.Errorf("want the export warning first, got %v", ps)
	}
}

func TestRubyToI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in    string
		n     int64
		exact bool
	}{
		{"12", 12, true}, {"-3", -3, true}, {"+7", 7, true}, {" 5", 5, false}, {"12abc", 12, false},
		{"abc", 0, false}, {"", 0, false}, {"0x1A", 0, false}, {"1_000", 1000, false}, {"1__0", 1, false},
		{"_1", 0, false}, {"1_", 1, false}, {"\n\t9", 9, false}, {"99999999999999999999999", 999999999999999999, false},
	} {
		n, exact := rubyToI(tc.in)
		if n != tc.n || exact != tc.exact {
			t.Errorf("rubyToI(%q) = %d, %v; want %d, %v", tc.in, n, exact, tc.n, tc.exact)
		}
	}
}
