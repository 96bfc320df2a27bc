package flow

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRenderVMGroup(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		edit  func(*Spec)
		roles []string
	}{
		{"one master: none", func(*Spec) {}, nil},
		{"three masters", func(s *Spec) { s.Master.Count = ptr(3) }, []string{RoleMaster}},
		{"opted out", func(s *Spec) { s.Master.Count, s.Master.AntiAffinity = ptr(3), ptr(false) }, nil},
		{"workers asked", func(s *Spec) { s.Master.Count, s.Worker.AntiAffinity = ptr(3), ptr(true) }, []string{RoleMaster, RoleWorker}},
		{"workers only", func(s *Spec) { s.Worker.AntiAffinity = ptr(true) }, []string{RoleWorker}},
	}
	for _, c := range cases {
		s := DefaultSpec()
		c.edit(&s)
		text, err := RenderVMGroup(s)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(c.roles) == 0 {
			if text != "" {
				t.Errorf("%s: VM group rendered:\n%s", c.name, text)
			}
		} else {
			want := `NAME = "kubernetes-anti-affinity"` + "\n"
			for _, r := range c.roles {
				want += "ROLE = [\n  NAME = \"" + r + "\",\n  POLICY = \"ANTI_AFFINED\" ]\n"
			}
			if !strings.HasPrefix(text, `NAME = "kubernetes-anti-affinity"`) || !strings.HasSuffix(text, strings.TrimPrefix(want, `NAME = "kubernetes-anti-affinity"`+"\n")) {
				t.Errorf("%s: VM group\n%s\nwant roles\n%s", c.name, text, want)
			}
		}
		doc7, _ := RenderService(s, Version7)
		var st ServiceTemplate7
		if err := json.Unmarshal(doc7, &st); err != nil {
			t.Fatal(err)
		}
		doc6, _ := RenderService(s, Version6)
		var st6 ServiceTemplate6
		if err := json.Unmarshal(doc6, &st6); err != nil {
			t.Fatal(err)
		}
		for i, r := range st.Roles {
			spread := strings.Contains(strings.Join(c.roles, ","), r.Name)
			g := r.TemplateContents.VMGroup
			if spread != (g != nil) || spread && (g["VMGROUP_NAME"] != s.VMGroupName() || g["ROLE"] != r.Name) {
				t.Errorf("%s: 7.x role %s VMGROUP %v", c.name, r.Name, g)
			}
			ref6 := "VMGROUP = [\n  VMGROUP_NAME = \"kubernetes-anti-affinity\",\n  ROLE = \"" + r.Name + "\" ]"
			if got := strings.Contains(st6.Roles[i].VMTemplateContents, ref6); got != spread {
				t.Errorf("%s: 6.x role %s VMGROUP %v:\n%s", c.name, r.Name, got, st6.Roles[i].VMTemplateContents)
			}
		}
		for _, d := range [][]byte{doc6, doc7} {
			if ps := Validate(d, ValidateOptions{}); HasErrors(ps) {
				t.Errorf("%s: %v", c.name, ps)
			}
		}
	}
	s := DefaultSpec()
	s.Master.Count = ptr(3)
	s.Metadata.Name = strings.Repeat("k", 120)
	if _, err := RenderVMGroup(s); err == nil || !strings.Contains(err.Error(), "VM group name") {
		t.Errorf("a VM group name over the limit: %v", err)
	}
}
