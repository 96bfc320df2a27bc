package onegatesim

import (
	"errors"
	"strings"
	"testing"
)

func TestParseServiceErrors(t *testing.T) {
	t.Parallel()
	v74 := version{7, 4}
	cases := []struct {
		name, tmpl, merge string
		v                 version
		err               string
	}{
		{"not json", `{`, "", v74, "decoding service template"},
		{"no name", `{"roles":[]}`, "", v74, "'name (string)'"},
		{"no roles", `{"name":"x","roles":[]}`, "", v74, "'roles (array)'"},
		{"7.x without type", `{"name":"x","roles":[{"name":"a","template_id":1}]}`, "", v74, "'type (string)'"},
		{"vr role", `{"name":"x","roles":[{"name":"a","type":"vr","template_id":1}]}`, "", v74, "only vm"},
		{"bad role name", `{"name":"x","roles":[{"name":"k8s-master","type":"vm","template_id":1}]}`, "", v74, `must match`},
		{"duplicate role", `{"name":"x","roles":[{"name":"a","type":"vm","template_id":1},{"name":"a","type":"vm","template_id":1}]}`, "", v74, "not unique"},
		{"mixed formats", `{"name":"x","roles":[{"name":"a","vm_template":1},{"name":"b","type":"vm","template_id":1}]}`, "", v74, "mix 6.x"},
		{"7.x on 6.10", `{"name":"x","roles":[{"name":"a","type":"vm","template_id":1}]}`, "", version{6, 10}, "'vm_template (integer)'"},
		{"NIC object", `{"name":"x","roles":[{"name":"a","type":"vm","template_id":1,"template_contents":{"NIC":{"NETWORK_ID":"0"}}}]}`, "", v74, "NIC must be an array"},
		{"cardinality over max", `{"name":"x","roles":[{"name":"a","type":"vm","template_id":1,"cardinality":3,"max_vms":2}]}`, "", v74, "outside"},
		{"bool cardinality", `{"name":"x","roles":[{"name":"a","type":"vm","template_id":1,"cardinality":true}]}`, "", v74, "cardinality"},
		{"inputs without values", string(mustRead(t, "k8s-7.json")), "", v74, ErrMissingInputs.Error()},
		{"one input missing", string(mustRead(t, "k8s-7.json")), `{"user_inputs_values":{"ONEAPP_K8S_VERSION":"1.31"}}`, v74, "ONEAPP_K8S_POD_CIDR"},
		{"bad 6.x contents", `{"name":"x","roles":[{"name":"a","vm_template":1,"vm_template_contents":"A=x,y"}]}`, "", v74, "Parse error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseService([]byte(c.tmpl), []byte(c.merge), c.v)
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("parseService error = %v, want it to mention %q", err, c.err)
			}
		})
	}
}

func mustRead(t *testing.T, name string) []byte { return readFile(t, name) }

func TestParseServiceMerge(t *testing.T) {
	t.Parallel()
	s, err := parseService(mustRead(t, "k8s-7.json"), mustRead(t, "k8s-7-merge.json"), version{7, 4})
	if err != nil {
		t.Fatal(err)
	}
	if s.name != "k8s-1" || !s.straight || !s.gate || s.networks["Private"] != "7" {
		t.Errorf("service: %+v", s)
	}
	w := s.roles[1]
	if w.cardinality != 3 || w.parents[0] != "master" || w.inputs["ONEAPP_K8S_VERSION"] != "1.31" || w.cooldown != 0 {
		t.Errorf("worker: %+v", w)
	}
	// Cardinality default moved from 1 to 0 in 6.10; strings are Integer()-ed.
	for _, c := range []struct {
		v    version
		card string
		want int
	}{{version{6, 8}, "", 1}, {version{6, 10}, "", 0}, {version{7, 4}, `,"cardinality":" 3 "`, 3}, {version{7, 4}, `,"cardinality":2.7`, 2}} {
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

func TestInputDefaults(t *testing.T) {
	t.Parallel()
	d, err := InputDefaults(mustRead(t, "k8s-7.json"))
	if err != nil || d["ONEAPP_K8S_VERSION"] != "1.31" || d["ONEAPP_K8S_POD_CIDR"] != "10.244.0.0/16" {
		t.Errorf("InputDefaults = %v, %v", d, err)
	}
}

func TestContextReplacedBy6xContextVector(t *testing.T) {
	h := newHarness(t, Options{Version: "6.10"})
	h.instantiate(`{"name":"x","roles":[
	  {"name":"a","vm_template":1,"cardinality":1,"vm_template_contents":"CONTEXT=[FOO=\"1\"]"},
	  {"name":"b","vm_template":1,"cardinality":1,"vm_template_contents":"CONTEXT=[FOO=\"1\"]\nAPPEND=\"CONTEXT\""}]}`, "")
	a, b := h.sim.Context(100), h.sim.Context(101)
	if a["FOO"] != "1" || a["TOKEN"] != "" || a["ONEGATE_ENDPOINT"] != "" {
		t.Errorf("6.x CONTEXT without APPEND should replace the base one: %v", a)
	}
	if b["FOO"] != "1" || b["TOKEN"] != "YES" || b["ONEGATE_ENDPOINT"] == "" {
		t.Errorf("6.x CONTEXT with APPEND should merge: %v", b)
	}
}

func TestStartServesLoopback(t *testing.T) {
	s := New(Options{Dir: t.TempDir()})
	defer s.Close()
	if _, err := s.Instantiate([]byte(simpleTemplate("none", false, 1, 0, "")), nil); !errors.Is(err, ErrNoEndpoint) {
		t.Errorf("Instantiate before Start: %v", err)
	}
	url, err := s.Start()
	if err != nil || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("Start = %q, %v", url, err)
	}
	if _, err := s.Instantiate([]byte(simpleTemplate("none", false, 1, 0, "")), nil); err != nil {
		t.Fatal(err)
	}
	if got := s.Context(100)["ONEGATE_ENDPOINT"]; got != url {
		t.Errorf("ONEGATE_ENDPOINT = %q, want %q", got, url)
	}
	old := New(Options{Version: "4.0"})
	defer old.Close()
	if _, err := old.Start(); err == nil {
		t.Error("version 4.0 accepted")
	}
}
