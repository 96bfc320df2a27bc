package flow

import (
	"strings"
	"testing"
)

// TestMasterCounts: odd 1 to 7; 1 warns that it is not HA; even counts are
// refused naming the quorum rule; the same in a spec and in a template.
func TestMasterCounts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n       int
		errs    string
		warning string
	}{
		{0, "at least 1", ""},
		{1, "", "not highly available"},
		{2, "majority of its members", ""},
		{3, "", ""},
		{4, "4 masters survive no more failures than 3", ""},
		{5, "", ""},
		{6, "odd number", ""},
		{7, "", ""},
		{9, "at most 7", ""},
	} {
		spec := DefaultSpec()
		n := c.n
		spec.Master.Count, spec.Master.Min, spec.Master.Max = &n, &n, &n
		var errs, warns []string
		for _, p := range CheckSpec(spec) {
			if p.Path != "master.count" {
				continue
			}
			if p.Severity == Error {
				errs = append(errs, p.Message)
			} else {
				warns = append(warns, p.Message)
			}
		}
		if got := strings.Join(errs, "; "); (c.errs == "") != (got == "") || !strings.Contains(got, c.errs) {
			t.Errorf("%d masters: errors %q, want %q", c.n, got, c.errs)
		}
		if got := strings.Join(warns, "; "); (c.warning == "") != (got == "") || !strings.Contains(got, c.warning) {
			t.Errorf("%d masters: warnings %q, want %q", c.n, got, c.warning)
		}
	}
}

func TestControlPlaneEndpointInput(t *testing.T) {
	t.Parallel()
	spec := DefaultSpec()
	spec.Kubernetes.ControlPlaneEndpoint = "127.0.0.1"
	found := false
	for _, p := range CheckSpec(spec) {
		if p.Path == "kubernetes.controlPlaneEndpoint" && strings.Contains(p.Message, "loopback") {
			found = true
		}
	}
	if !found {
		t.Error("a loopback endpoint is not refused")
	}
	spec.Kubernetes.ControlPlaneEndpoint = "k8s.example.com:443"
	for _, p := range CheckSpec(spec) {
		if p.Path == "kubernetes.controlPlaneEndpoint" {
			t.Errorf("valid endpoint refused: %v", p)
		}
	}
	var in *UserInput
	for _, u := range UserInputs(spec) {
		if u.Name == "ONEAPP_K8S_CONTROL_PLANE_EP" {
			in = &u
		}
	}
	if in == nil || in.Default != "k8s.example.com:443" || !strings.Contains(in.Description, "local balancer") {
		t.Errorf("user input %+v", in)
	}
}
