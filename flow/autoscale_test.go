package flow

import (
	"encoding/json"
	"strings"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
)

func TestParseAutoscale(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		lo, hi  int
		on      bool
		wantErr string
	}{
		{in: ""},
		{in: "  "},
		{in: "1:10", lo: 1, hi: 10, on: true},
		{in: " 0:3 ", lo: 0, hi: 3, on: true},
		{in: "3:3", lo: 3, hi: 3, on: true},
		{in: "0:5000", hi: 5000, on: true},
		{in: "0:0", wantErr: "max must be 1 or more"},
		{in: "4:2", wantErr: "min 4 is above max 2"},
		{in: "5", wantErr: "want min:max"},
		{in: "1:2:3", wantErr: `max "2:3"`},
		{in: ":3", wantErr: `min ""`},
		{in: "1:", wantErr: `max ""`},
		{in: "+1:3", wantErr: `min "+1"`},
		{in: "-1:3", wantErr: `min "-1"`},
		{in: "1: 3", wantErr: `max " 3"`},
		{in: "0x1:3", wantErr: `min "0x1"`},
		{in: "1.5:3", wantErr: `min "1.5"`},
		{in: "1:5001", wantErr: `max "5001"`},
		{in: "1:99999999999999999999", wantErr: "not a whole number"},
	}
	for _, c := range cases {
		lo, hi, on, err := ParseAutoscale(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || lo != c.lo || hi != c.hi || on != c.on {
			t.Errorf("%q = %d, %d, %v, %v; want %d, %d, %v", c.in, lo, hi, on, err, c.lo, c.hi, c.on)
		}
	}
}

func FuzzParseAutoscale(f *testing.F) {
	for _, s := range []string{"", "1:10", "0:0", "4:2", "x", "1:2:3", " 7:9 ", "0009:0010", "\x00:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lo, hi, on, err := ParseAutoscale(s)
		switch {
		case err != nil && (on || lo != 0 || hi != 0):
			t.Fatalf("%q: error %v with values %d %d %v", s, err, lo, hi, on)
		case err == nil && on && !(0 <= lo && lo <= hi && hi >= 1 && hi <= MaxNodes):
			t.Fatalf("%q: out of range %d:%d", s, lo, hi)
		case err == nil && !on && strings.TrimSpace(s) != "":
			t.Fatalf("%q: not empty, yet off", s)
		}
	})
}

// Every role gets an explicit cooldown (OneFlow's default of 300 s would
// hold each upgrade or remediation step); the worker's bounds follow the
// autoscale input; masters stay at min = max = count.
func TestRenderScaleFields(t *testing.T) {
	t.Parallel()
	type role struct{ min, max, cooldown int }
	cases := []struct {
		name         string
		edit         func(*Spec)
		master, work role
		autoscale    string
	}{
		{name: "default", edit: func(*Spec) {},
			master: role{1, 1, DefaultCooldown}, work: role{1, 10, DefaultCooldown}},
		{name: "3 masters, cooldown 5", edit: func(s *Spec) {
			s.Master.Count, s.Master.Cooldown, s.Worker.Cooldown = ptr(3), ptr(5), ptr(0)
		}, master: role{3, 3, 5}, work: role{1, 10, 0}},
		{name: "autoscale", edit: func(s *Spec) { s.Worker.Autoscale = "2:6" },
			master: role{1, 1, DefaultCooldown}, work: role{2, 6, DefaultCooldown}, autoscale: "2:6"},
		{name: "autoscale from zero", edit: func(s *Spec) { s.Worker.Autoscale, s.Worker.Count = "0:4", ptr(0) },
			master: role{1, 1, DefaultCooldown}, work: role{0, 4, DefaultCooldown}, autoscale: "0:4"},
	}
	for _, c := range cases {
		s := DefaultSpec()
		c.edit(&s)
		for _, v := range []OneFlowVersion{Version6, Version7} {
			doc, err := RenderService(s, v)
			if err != nil {
				t.Fatalf("%s/%d: %v", c.name, v, err)
			}
			var st struct {
				Inputs6 map[string]string `json:"custom_attrs"`
				Inputs7 map[string]string `json:"user_inputs"`
				Roles   []struct {
					Name     string `json:"name"`
					MinVMs   *int   `json:"min_vms"`
					MaxVMs   *int   `json:"max_vms"`
					Cooldown *int   `json:"cooldown"`
				} `json:"roles"`
			}
			if err := json.Unmarshal(doc, &st); err != nil {
				t.Fatal(err)
			}
			for i, want := range []role{c.master, c.work} {
				r := st.Roles[i]
				if r.MinVMs == nil || r.MaxVMs == nil || r.Cooldown == nil ||
					(role{*r.MinVMs, *r.MaxVMs, *r.Cooldown}) != want {
					t.Errorf("%s/%d %s: min %v max %v cooldown %v, want %+v", c.name, v, r.Name, r.MinVMs, r.MaxVMs, r.Cooldown, want)
				}
			}
			in := st.Inputs7[KeyAutoscale] + st.Inputs6[KeyAutoscale]
			if !strings.HasPrefix(in, "O|text|") || !strings.HasSuffix(in, "|"+c.autoscale) {
				t.Errorf("%s/%d: input %s = %q", c.name, v, KeyAutoscale, in)
			}
			if ps := Validate(doc, ValidateOptions{Version: v}); HasErrors(ps) {
				t.Errorf("%s/%d: %v", c.name, v, ps)
			}
		}
	}
}

func TestCheckSpecAutoscale(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, path, want string
		edit             func(*Spec)
	}{
		{"bad value", "worker.autoscale", "want min:max", func(s *Spec) { s.Worker.Autoscale = "many" }},
		{"count below", "worker.min", "min 3 is above the count 2", func(s *Spec) { s.Worker.Autoscale = "3:5" }},
		{"count above", "worker.max", "max 1 is below the count 2", func(s *Spec) { s.Worker.Autoscale = "1:1" }},
		{"masters", "master.autoscale", "only the worker role", func(s *Spec) { s.Master.Autoscale = "1:3" }},
		{"two minimums", "worker.min", "differs from autoscale's minimum 1", func(s *Spec) { s.Worker.Autoscale, s.Worker.Min = "1:5", ptr(2) }},
		{"two maximums", "worker.max", "differs from autoscale's maximum 5", func(s *Spec) { s.Worker.Autoscale, s.Worker.Max = "1:5", ptr(6) }},
	}
	for _, c := range cases {
		s := DefaultSpec()
		c.edit(&s)
		found := false
		for _, p := range CheckSpec(s) {
			if p.Severity == Error && p.Path == c.path && strings.Contains(p.Message, c.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no error %s: %q in %v", c.name, c.path, c.want, CheckSpec(s))
		}
	}
	s := DefaultSpec()
	s.Master.Count, s.Master.Max = ptr(3), ptr(5)
	found := false
	for _, p := range CheckSpec(s) {
		found = found || p.Severity == Warning && p.Path == "master" && strings.Contains(p.Message, "min 3 and max 5 differ from the count 3")
	}
	if !found {
		t.Errorf("masters that OneFlow may scale: no warning in %v", CheckSpec(s))
	}
	s = DefaultSpec()
	s.Worker.Autoscale, s.Worker.Min, s.Worker.Max = "1:5", ptr(1), ptr(5)
	if ps := CheckSpec(s); HasErrors(ps) {
		t.Errorf("agreeing min/max refused: %v", ps)
	}
}

// A cluster that starts at zero workers with autoscaling on keeps the
// master tainted (pods must wait for, and so raise, the worker role) and
// tells its masters the worker role's size, in both OneFlow versions.
func TestRenderScaleFromZero(t *testing.T) {
	t.Parallel()
	s := DefaultSpec()
	s.Worker.Autoscale, s.Worker.Count, s.Worker.VCPU, s.Worker.MemoryMB = "0:3", ptr(0), 2, 4096
	if !s.TaintedMaster() {
		t.Error("TaintedMaster() = false for 0 workers autoscaled to 3")
	}
	if ps := CheckSpec(s); HasErrors(ps) {
		t.Fatalf("CheckSpec: %v", ps)
	}
	in := inputMap(s)[vmcontext.KeyTaintedMaster]
	if !strings.HasSuffix(in, "|YES") {
		t.Errorf("input %s = %q, want default YES", vmcontext.KeyTaintedMaster, in)
	}
	want := "vcpu=2 memory=4096"
	doc7, err := RenderService(s, Version7)
	if err != nil {
		t.Fatal(err)
	}
	var st7 struct {
		Roles []struct {
			Name             string `json:"name"`
			TemplateContents struct {
				Context map[string]string `json:"CONTEXT"`
			} `json:"template_contents"`
		} `json:"roles"`
	}
	if err := json.Unmarshal(doc7, &st7); err != nil {
		t.Fatal(err)
	}
	for _, r := range st7.Roles {
		got, has := r.TemplateContents.Context[vmcontext.KeyWorkerTemplate]
		if r.Name == RoleMaster && got != want || r.Name == RoleWorker && has {
			t.Errorf("7.x %s: %s = %q (set %v)", r.Name, vmcontext.KeyWorkerTemplate, got, has)
		}
	}
	doc6, err := RenderService(s, Version6)
	if err != nil {
		t.Fatal(err)
	}
	var st6 struct {
		Roles []struct {
			Name     string `json:"name"`
			Contents string `json:"vm_template_contents"`
		} `json:"roles"`
	}
	if err := json.Unmarshal(doc6, &st6); err != nil {
		t.Fatal(err)
	}
	line := vmcontext.KeyWorkerTemplate + ` = "` + want + `"`
	for _, r := range st6.Roles {
		if has := strings.Contains(r.Contents, line); has != (r.Name == RoleMaster) {
			t.Errorf("6.x %s: vm_template_contents has %q: %v\n%s", r.Name, line, has, r.Contents)
		}
	}
	for _, v := range []OneFlowVersion{Version6, Version7} {
		doc, _ := RenderService(s, v)
		if ps := Validate(doc, ValidateOptions{Version: v}); HasErrors(ps) {
			t.Errorf("%d: %v", v, ps)
		}
	}
}
