package flow

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
)

var update = flag.Bool("update", false, "rewrite golden files")

// testSpecs are the specs every renderer test runs on.
func testSpecs(t testing.TB) map[string]Spec {
	t.Helper()
	b, err := os.ReadFile("testdata/large.yaml")
	if err != nil {
		t.Fatal(err)
	}
	large, err := ParseSpec(b)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Spec{"default": DefaultSpec(), "large": large}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./flow/... -run Golden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the rendering; got:\n%s", path, got)
	}
}

func TestGoldenService(t *testing.T) {
	for name, spec := range testSpecs(t) {
		for _, v := range []OneFlowVersion{Version6, Version7} {
			t.Run(fmt.Sprintf("%s/%d", name, v), func(t *testing.T) {
				got, err := RenderService(spec, v)
				if err != nil {
					t.Fatal(err)
				}
				golden(t, fmt.Sprintf("%s.%d.golden.json", name, v), got)
			})
		}
	}
}

func TestGoldenVMTemplate(t *testing.T) {
	for name, spec := range testSpecs(t) {
		for _, role := range []string{RoleMaster, RoleWorker} {
			t.Run(name+"/"+role, func(t *testing.T) {
				got, err := RenderVMTemplate(spec, role)
				if err != nil {
					t.Fatal(err)
				}
				golden(t, fmt.Sprintf("%s.%s.golden.tmpl", name, role), []byte(got))
			})
		}
	}
}

// TestRenderDeterministic: the same input gives byte-identical output, maps
// and all.
func TestRenderDeterministic(t *testing.T) {
	t.Parallel()
	for name, spec := range testSpecs(t) {
		for _, v := range []OneFlowVersion{Version6, Version7} {
			first, err := RenderService(spec, v)
			if err != nil {
				t.Fatal(err)
			}
			for range 20 {
				again, _ := RenderService(spec, v)
				if !bytes.Equal(first, again) {
					t.Fatalf("%s/%d: two renderings differ", name, v)
				}
			}
		}
	}
}

// TestRenderedValidates: our own output has no validation errors, in the
// version it was rendered for and auto-detected.
func TestRenderedValidates(t *testing.T) {
	t.Parallel()
	for name, spec := range testSpecs(t) {
		for _, v := range []OneFlowVersion{Version6, Version7} {
			doc, err := RenderService(spec, v)
			if err != nil {
				t.Fatal(err)
			}
			for _, forced := range []OneFlowVersion{VersionAuto, v} {
				if ps := Validate(doc, ValidateOptions{Version: forced}); HasErrors(ps) {
					t.Errorf("%s/%d (validated as %v): %v", name, v, forced, ps)
				}
			}
		}
	}
}

func TestRenderServiceShape(t *testing.T) {
	t.Parallel()
	spec := DefaultSpec()
	doc7, err := RenderService(spec, Version7)
	if err != nil {
		t.Fatal(err)
	}
	var st7 ServiceTemplate7
	if err := json.Unmarshal(doc7, &st7); err != nil {
		t.Fatal(err)
	}
	if st7.Deployment != "straight" || !st7.ReadyStatusGate {
		t.Errorf("deployment %q gate %v", st7.Deployment, st7.ReadyStatusGate)
	}
	m, w := st7.Roles[0], st7.Roles[1]
	if m.Name != RoleMaster || m.Cardinality != 1 || w.Name != RoleWorker || w.Cardinality != 2 ||
		len(w.Parents) != 1 || w.Parents[0] != RoleMaster || *w.MinVMs != 1 || *w.MaxVMs != 10 {
		t.Errorf("roles: %+v %+v", m, w)
	}
	if m.Type != "vm" || len(m.TemplateContents.NIC) != 1 || m.TemplateContents.NIC[0].NetworkID != "$Private" {
		t.Errorf("master: %+v", m)
	}
	if m.TemplateContents.Context[vmcontext.KeyContract] != "1" {
		t.Errorf("contract missing: %v", m.TemplateContents.Context)
	}
	for _, k := range []string{vmcontext.KeyAddress, vmcontext.KeyPort, vmcontext.KeyPodsNetwork, vmcontext.KeyNodeName,
		vmcontext.KeyServicesNet, vmcontext.KeyCNI} {
		if _, ok := st7.UserInputs[k]; !ok {
			t.Errorf("user input %s missing", k)
		}
	}
	// The image carries one Kubernetes release: no version input.
	if _, ok := st7.UserInputs[vmcontext.KeyVersion]; ok {
		t.Errorf("user input %s rendered", vmcontext.KeyVersion)
	}
	if got := st7.UserInputs[vmcontext.KeyPort]; !strings.HasSuffix(got, "|6443") {
		t.Errorf("port input %q", got)
	}
	if _, ok := st7.Networks["Private"]; !ok {
		t.Errorf("networks: %v", st7.Networks)
	}

	doc6, err := RenderService(spec, Version6)
	if err != nil {
		t.Fatal(err)
	}
	var st6 ServiceTemplate6
	if err := json.Unmarshal(doc6, &st6); err != nil {
		t.Fatal(err)
	}
	c := st6.Roles[0].VMTemplateContents
	if strings.Contains(c, "CONTEXT") {
		t.Errorf("6.x contents must not set CONTEXT:\n%s", c)
	}
	for _, u := range UserInputs(spec) {
		if !strings.Contains(c, u.Name+` = "$`+u.Name+`"`) {
			t.Errorf("6.x contents lack %s:\n%s", u.Name, c)
		}
	}
	if len(st6.CustomAttrs) != len(UserInputs(spec)) {
		t.Errorf("custom_attrs: %v", st6.CustomAttrs)
	}
}

func TestRenderNetworkID(t *testing.T) {
	t.Parallel()
	spec := DefaultSpec()
	spec.Network.ID = ptr(0)
	doc, err := RenderService(spec, Version7)
	if err != nil {
		t.Fatal(err)
	}
	var st ServiceTemplate7
	_ = json.Unmarshal(doc, &st)
	if st.Networks["Private"] != "M|network|Kubernetes nodes network||id:0" ||
		len(st.NetworksValues) != 1 || st.NetworksValues[0]["Private"].ID != "0" {
		t.Errorf("networks %v values %v", st.Networks, st.NetworksValues)
	}
	if ps := Validate(doc, ValidateOptions{}); len(ps) != 3 { // the two unset template IDs, 1 master
		t.Errorf("problems: %v", ps)
	}
}

func TestRenderRefusesBadSpec(t *testing.T) {
	t.Parallel()
	spec := DefaultSpec()
	spec.Master.Count = ptr(2)
	if _, err := RenderService(spec, Version7); err == nil || !strings.Contains(err.Error(), "master.count") {
		t.Errorf("err = %v", err)
	}
	if _, err := RenderVMTemplate(spec, RoleWorker); err == nil {
		t.Error("vm template rendered for a bad spec")
	}
	if _, err := RenderService(DefaultSpec(), 8); err == nil {
		t.Error("version 8 accepted")
	}
	if _, err := RenderVMTemplate(DefaultSpec(), "etcd"); err == nil {
		t.Error("role etcd accepted")
	}
}

// TestMasterVMIDOnlyStraightWorkers: ${master.vm.id} reaches the worker
// role alone, and only with straight deployment; with "none" the master may
// not exist when a worker is made, so nothing is rendered.
func TestMasterVMIDOnlyStraightWorkers(t *testing.T) {
	for _, deployment := range []string{"straight", "none"} {
		spec := DefaultSpec()
		spec.Service.Deployment = deployment
		want := deployment == "straight"
		for _, v := range []OneFlowVersion{Version6, Version7} {
			b, err := RenderService(spec, v)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Roles []map[string]any `json:"roles"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			for _, r := range doc.Roles {
				role, _ := json.Marshal(r)
				got := strings.Contains(string(role), vmcontext.KeyMasterVMID)
				if got != (want && r["name"] == RoleWorker) {
					t.Errorf("%s, OneFlow %d, role %v: has %s = %v", deployment, v, r["name"], vmcontext.KeyMasterVMID, got)
				}
				if got && !strings.Contains(string(role), masterVMIDExpr) {
					t.Errorf("%s, OneFlow %d: %s without %s: %s", deployment, v, vmcontext.KeyMasterVMID, masterVMIDExpr, role)
				}
			}
		}
		for _, role := range []string{RoleMaster, RoleWorker} {
			text, err := RenderVMTemplate(spec, role)
			if err != nil {
				t.Fatal(err)
			}
			ref := vmcontext.KeyMasterVMID + ` = "$` + vmcontext.KeyMasterVMID + `"`
			// Every role's VM template references it in straight mode (a
			// master's resolves to ""; the marketplace uses the master's
			// template for both roles); only workers are given a value.
			if got := strings.Contains(text, vmcontext.KeyMasterVMID); got != want || got && !strings.Contains(text, ref) {
				t.Errorf("%s, %s VM template: has %s = %v:\n%s", deployment, role, vmcontext.KeyMasterVMID, got, text)
			}
		}
	}
}
