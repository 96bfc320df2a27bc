package flow

import (
	"math"
	"strings"
	"testing"
)

// TestSpecCPUAndText: CPU is at least 0.01 with at most two decimals (oned
// counts it in hundredths of a core), NaN and Inf included; no name or text
// of the spec carries a control character or invalid UTF-8.
func TestSpecCPUAndText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(*Spec)
		want string // "" = no errors
	}{
		{"cpu NaN", func(s *Spec) { s.Master.CPU = math.NaN() }, "error master.cpu: NaN: want at least 0.01"},
		{"cpu Inf", func(s *Spec) { s.Master.CPU = math.Inf(1) }, "error master.cpu: +Inf"},
		{"cpu -Inf", func(s *Spec) { s.Worker.CPU = math.Inf(-1) }, "error worker.cpu: -Inf: want at least 0.01"},
		{"cpu tiny", func(s *Spec) { s.Master.CPU = 1e-300 }, "error master.cpu: 1e-300: want at least 0.01"},
		{"cpu below a hundredth", func(s *Spec) { s.Worker.CPU = 0.009 }, "error worker.cpu: 0.009: want at least 0.01"},
		{"cpu a hundredth", func(s *Spec) { s.Worker.CPU = 0.01 }, ""},
		{"cpu two decimals", func(s *Spec) { s.Worker.CPU = 2.25 }, ""},
		{"cpu three decimals", func(s *Spec) { s.Worker.CPU = 0.125 }, "error worker.cpu: 0.125: at most two decimals"},
		{"cpu negative", func(s *Spec) { s.Worker.CPU = -1 }, "error worker.cpu: -1: want at least 0.01"},
		{"name control", func(s *Spec) { s.Metadata.Name = "k8s\x01" }, `error metadata.name: "k8s\x01": OpenNebula names cannot contain the control character '\x01'`},
		{"name DEL", func(s *Spec) { s.Metadata.Name = "k8s\x7f" }, `control character '\x7f'`},
		{"template name C1", func(s *Spec) { s.Worker.TemplateName = "w\u0085" }, `error worker.templateName: the worker VM template name "w\u0085": OpenNebula names cannot contain the control character '\u0085'`},
		{"description escape", func(s *Spec) { s.Metadata.Description = "red \x1b[31m" }, `error metadata.description: control character '\x1b' at byte 4`},
		{"description lines", func(s *Spec) { s.Metadata.Description = "line one\n\tline two" }, ""},
		{"description bad utf-8", func(s *Spec) { s.Metadata.Description = "caf\xe9" }, "error metadata.description: invalid UTF-8 at byte 3"},
		{"network description newline", func(s *Spec) { s.Network.Description = "nodes\nnet" }, `error network.description: control character '\n' at byte 5`},
		{"image", func(s *Spec) { s.Worker.Disk.Image = "onekube\x00" }, `error worker.disk.image: control character '\x00' at byte 7`},
		{"image owner", func(s *Spec) { s.Master.Disk.ImageUname = "\toneadmin" }, `error master.disk.imageUname: control character '\t' at byte 0`},
		{"input description", func(s *Spec) {
			s.UserInputs = []UserInput{{Name: "X", Type: "text", Description: "a\rb"}}
		}, `error userInputs[0].description: control character '\r' at byte 1`},
		{"input default", func(s *Spec) { s.UserInputs = []UserInput{{Name: "X", Type: "text", Default: "\x07"}} }, "error userInputs[0].default: control character"},
		{"expression", func(s *Spec) {
			s.Worker.ElasticityPolicies = []ElasticityPolicy{{Type: "CHANGE", Adjust: 1, Expression: "CPU > 80\x00"}}
		}, "error worker.elasticityPolicies[0].expression: control character '\\x00' at byte 8"},
		{"address", func(s *Spec) { s.Kubernetes.Address = "vnet\x02" }, `error kubernetes.address: ONEAPP_K8S_ADDRESS: "vnet\x02" is neither a CIDR (e.g. 10.0.0.0/24) nor a virtual network name: OpenNebula names cannot contain the control character '\x02'`},
		{"endpoint", func(s *Spec) { s.Kubernetes.ControlPlaneEndpoint = "lb\x1f:6443" }, "error kubernetes.controlPlaneEndpoint: control character"},
		{"unicode text", func(s *Spec) { s.Metadata.Description = "Kubernetes — clúster ☸" }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSpec()
			tc.edit(&s)
			ps := CheckSpec(s)
			var lines []string
			for _, p := range ps {
				lines = append(lines, p.String())
			}
			all := strings.Join(lines, "\n")
			if tc.want == "" {
				if HasErrors(ps) {
					t.Errorf("unexpected errors:\n%s", all)
				}
				return
			}
			if !strings.Contains(all, tc.want) {
				t.Errorf("want %q in:\n%s", tc.want, all)
			}
			if strings.Count(all, "\n")+1 != len(lines) {
				t.Errorf("a problem spans lines:\n%s", all)
			}
		})
	}
}
