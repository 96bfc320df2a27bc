package onegatesim

import (
	"errors"
	"strings"
	"testing"
)

func mustRead(t *testing.T, name string) []byte { return readFile(t, name) }

// TestParseServiceRefusals: what create or instantiate refuses, with the
// status and message the real server gives.
func TestParseServiceRefusals(t *testing.T) {
	t.Parallel()
	v74, v610 := version{7, 4}, version{6, 10}
	role7 := `{"name":"a","type":"vm","template_id":1`
	cases := []struct {
		name, tmpl, merge string
		v                 version
		status            int
		msg               string // a prefix of the body
	}{
		{"not json", `{`, "", v74, 400, "unexpected end of input at line 1 column 2"},
		{"no name", `{"roles":[]}`, "", v74, 400, "Mandatory document key 'name (string)' is missing from "},
		{"no name 6.10", `{"roles":[]}`, "", v610, 400, "KEY: 'name' is required;"},
		{"roles not a list", `{"name":"x","roles":{}}`, "", v74, 400, "KEY: 'roles' must be an Array;"},
		{"7.x without type", `{"name":"x","roles":[{"name":"a","template_id":1}]}`, "", v74, 400, "Mandatory document key 'type (string)' is missing"},
		{"unknown type", `{"name":"x","roles":[{"name":"a","type":"vx","template_id":1}]}`, "", v74, 400, `Unsupported role type "vx"`},
		{"bad role name", `{"name":"x","roles":[{"name":"k8s-master","type":"vm","template_id":1}]}`, "", v74, 400, `KEY: 'name' must match regexp /^\w+$/;`},
		{"duplicate role", `{"name":"x","roles":[` + role7 + `},` + role7 + `}]}`, "", v74, 400, "Role name 'a' is repeated"},
		{"mixed formats are not converted", `{"name":"x","roles":[{"name":"a","vm_template":1},{"name":"b","type":"vm","template_id":1}]}`, "", v74, 400, "Mandatory document key 'type (string)' is missing"},
		{"7.x on 6.10", `{"name":"x","roles":[` + role7 + `}]}`, "", v610, 400, "KEY: 'vm_template' is required;"},
		{"cardinality over max", `{"name":"x","roles":[` + role7 + `,"cardinality":3,"max_vms":2}]}`, "", v74, 400, "Role 'a' 'cardinality' must be lower than or equal to 'max_vms'"},
		{"cardinality under min", `{"name":"x","roles":[` + role7 + `,"cardinality":1,"min_vms":2}]}`, "", v74, 400, "Role 'a' 'cardinality' must be greater than or equal to 'min_vms'"},
		{"negative cardinality", `{"name":"x","roles":[` + role7 + `,"cardinality":-1}]}`, "", v74, 400, "KEY: 'cardinality' must be greater than or equal to 0;"},
		{"cardinality not a number", `{"name":"x","roles":[` + role7 + `,"cardinality":"three"}]}`, "", v74, 400, "KEY: 'cardinality' must be an Integer;"},
		{"bool cardinality raises", `{"name":"x","roles":[` + role7 + `,"cardinality":true}]}`, "", v74, 500, `{"message":"Internal server error","reason":"can't convert true into Integer"}`},
		{"policies need min and max", `{"name":"x","roles":[` + role7 + `,"elasticity_policies":[{"type":"CHANGE","adjust":1,"expression":"CPU > 1"}]}]}`, "", v74, 400, "Role 'a' with  'elasticity_policies' or 'scheduled_policies'must define both"},
		{"bad deployment", `{"name":"x","deployment":"fast","roles":[]}`, "", v74, 400, "KEY: 'deployment' must be one of none, straight;"},
		{"bool gate", `{"name":"x","ready_status_gate":"yes","roles":[]}`, "", v610, 400, "KEY: 'ready_status_gate' is not allowed;"},
		{"inputs without values", string(mustRead(t, "k8s-7.json")), "", v74, 400, ErrMissingInputs.Error()},
		{"one input missing", string(mustRead(t, "k8s-7.json")), `{"user_inputs_values":{"ONEAPP_K8S_VERSION":"1.31"}}`, v74, 400, "Verify that every User Input have its corresponding value defined"},
		{"values not an object", string(mustRead(t, "k8s-7.json")), `{"user_inputs_values":[1]}`, v74, 400, "Wrong User Inputs or User Inputs Values format"},
		{"template_contents null", `{"name":"x","roles":[` + role7 + `,"template_contents":null}]}`, "", v74, 400, "Error validating template_contents object for therole a. The object must be a valid hash."},
		{"network default without an id field", `{"name":"x","networks":{"N":"M|network|net||"},"roles":[]}`, "", v74, 400, "Wrong networks format"},
		{"a network without a value", `{"name":"x","networks":{"N":"M|network|net||id:0","P":"M|network|p||id:1"},"roles":[]}`, `{"networks_values":[{"N":{"id":"3"}}]}`, v74, 400, "Every network key must have its value defined at networks_value"},
		{"networks_values entries must be objects", `{"name":"x","networks":{"N":"M|network|net||id:0"},"roles":[]}`, `{"networks_values":["N"]}`, v74, 400, "Wrong networks_values format"},
		{"merge not json", `{"name":"x","roles":[]}`, `{"roles":`, v74, 500, `{"message":"Internal server error","reason":"unexpected end of input at line 1 column 10"}`},
		{"a value holding its own $KEY doubles the text per occurrence", `{"name":"x","roles":[{"name":"a","vm_template":1,"vm_template_contents":"` + strings.Repeat("$A ", 30) + `"}]}`,
			`{"custom_attrs_values":{"A":"$A$A"}}`, v610, 500, `{"message":"Internal server error","reason":"failed to allocate memory"}`},
		{"role inputs but no merge roles", `{"name":"x","roles":[` + role7 + `,"user_inputs":{"A":"M|text|a"}}]}`, `{}`, v74, 400, "The Service template specifies user inputs for the role a but no values have been found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseService([]byte(c.tmpl), []byte(c.merge), c.v)
			var fe *FlowError
			if !errors.As(err, &fe) {
				t.Fatalf("parseService error = %v, want a FlowError", err)
			}
			if fe.Status != c.status || !strings.HasPrefix(fe.Message, c.msg) {
				t.Errorf("got %d %q\nwant %d %q...", fe.Status, fe.Message, c.status, c.msg)
			}
			if !errors.Is(err, ErrBadTemplate) && !errors.Is(err, ErrMissingInputs) {
				t.Errorf("%v is neither ErrBadTemplate nor ErrMissingInputs", err)
			}
		})
	}
}

func TestParseServiceNotSimulated(t *testing.T) {
	t.Parallel()
	_, err := parseService([]byte(`{"name":"x","roles":[{"name":"a","type":"vr","template_id":1}]}`), nil, version{7, 4})
	var fe *FlowError
	if !errors.Is(err, ErrBadTemplate) || errors.As(err, &fe) || !strings.Contains(err.Error(), "not simulated") {
		t.Errorf("a vr role: %v, want a plain ErrBadTemplate saying it is not simulated", err)
	}
}

func TestParseServiceMerge(t *testing.T) {
	t.Parallel()
	s, err := parseService(mustRead(t, "k8s-7.json"), mustRead(t, "k8s-7-merge.json"), version{7, 4})
	if err != nil {
		t.Fatal(err)
	}
	if s.name != "k8s-1" || !s.straight || !s.gate || s.networks["Private"].id != "7" {
		t.Errorf("service: %+v", s)
	}
	w := s.roles[1]
	if w.cardinality != 3 || w.parents[0] != "master" || w.cooldown != 0 || !strings.Contains(w.text, `ONEAPP_K8S_VERSION = "1.31"`) ||
		!strings.Contains(w.text, `NETWORK_ID = "7"`) {
		t.Errorf("worker: %+v", w)
	}
	// Cardinality default moved from 1 to 0 in 6.10; strings are Integer()-ed.
	for _, c := range []struct {
		v    version
		card string
		want int
	}{{version{6, 8}, "", 1}, {version{6, 10}, "", 0}, {version{6, 10}, `,"cardinality":null`, 0},
		{version{7, 4}, `,"cardinality":" 3 "`, 3}, {version{7, 4}, `,"cardinality":2.7`, 2}, {version{7, 4}, `,"cardinality":"0x2"`, 2}} {
		doc := `{"name":"x","roles":[{"name":"a","vm_template":1` + c.card + `}]}`
		s, err := parseService([]byte(doc), nil, c.v)
		if err != nil || s.roles[0].cardinality != c.want {
			t.Errorf("%s %s: cardinality %v, %v; want %d", c.v, c.card, s, err, c.want)
		}
	}
	if _, err := parseService(mustRead(t, "k8s-6.json"), []byte(`{"custom_attrs_values":{}}`), version{7, 4}); !errors.Is(err, ErrMissingInputs) {
		t.Errorf("6.x on 7.4 without values: %v", err)
	}
}

func TestKernelInteger(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   any
		want int
		bad  bool
	}{
		{"3", 3, false}, {" 3 ", 3, false}, {"0x1A", 26, false}, {"017", 15, false}, {"0b11", 3, false},
		{"3_000", 3000, false}, {"08", 0, true}, {"3__0", 0, true}, {"", 0, true}, {"x", 0, true},
	} {
		got, err := kernelInteger(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("Integer(%q) = %d, %v", c.in, got, err)
		}
	}
}

func TestUpgradeTemplateContents(t *testing.T) {
	t.Parallel()
	got := upgradeTemplateContents("NIC = [ NAME = \"NIC0\",\n NETWORK_ID = \"$Private\" ]\nA = \"x,y\"\nB=1\nB=2\nno equals\nE = []\nCONTEXT=[T=\"YES\"]\n")
	want := map[string]string{
		"NIC": `[{"NAME":"NIC0","NETWORK_ID":"$Private"}]`, "A": `"x,y"`, "B": `["1","2"]`, "E": `[{}]`,
		"CONTEXT": `[{"T":"YES"}]`,
	}
	if len(got) != len(want) {
		t.Errorf("keys: %v", got)
	}
	for k, w := range want {
		if b, _ := marshal(got[k]); string(b) != w {
			t.Errorf("%s = %s, want %s", k, b, w)
		}
	}
}

func TestToRaw(t *testing.T) {
	t.Parallel()
	got := toRaw(map[string]any{
		"NIC":     []any{map[string]any{"NAME": "NIC0", "NETWORK_ID": nil}},
		"CONTEXT": map[string]any{"A": `say "hi"`},
		"E":       map[string]any{},
		"N":       3,
	})
	want := "CONTEXT = [\nA = \"say \\\"hi\\\"\"\n]\nE = [\n\n]\nN = \"3\"\nNIC = [\nNAME = \"NIC0\",\nNETWORK_ID = \"\"\n]\n"
	if got != want {
		t.Errorf("toRaw:\n%s\nwant:\n%s", got, want)
	}
	attrs, err := parseTemplate(got)
	if err != nil || len(attrs) != 4 || attrs[3].vector["NETWORK_ID"] != "" {
		t.Errorf("oned parses it as %+v, %v", attrs, err)
	}
}
