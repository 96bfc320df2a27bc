package flow

import (
	"errors"
	"strings"
	"testing"
)

// TestSpecLaxNumbers: a spec's numbers are decimal. The YAML reader (YAML
// 1.1) reads 010 as 8, 0x10 as 16, 1_0 as 10 and takes 1e-300; each is
// refused at its path, while a quoted text is left to the field's type.
func TestSpecLaxNumbers(t *testing.T) {
	t.Parallel()
	head := "apiVersion: onekube.io/v1alpha1\nkind: Cluster\n"
	cases := []struct {
		name, doc, wantErr string
		check              func(t *testing.T, s Spec)
	}{
		{name: "octal count", doc: head + "worker:\n  count: 010\n", wantErr: "worker.count: 010: leading zeros are not allowed"},
		{name: "08", doc: head + "worker:\n  count: 08\n", wantErr: "worker.count: 08: leading zeros"},
		{name: "hex", doc: head + "worker:\n  count: 0x10\n", wantErr: "worker.count: 0x10: hexadecimal"},
		{name: "0o", doc: head + "master:\n  memoryMB: 0o4000\n", wantErr: "master.memoryMB: 0o4000: hexadecimal"},
		{name: "binary", doc: head + "master:\n  vcpu: 0b10\n", wantErr: "master.vcpu: 0b10"},
		{name: "underscores", doc: head + "worker:\n  memoryMB: 8_192\n", wantErr: "worker.memoryMB: 8_192: write the number without _ separators"},
		{name: "plus", doc: head + "worker:\n  count: +3\n", wantErr: "worker.count: +3: want a decimal"},
		{name: "exponent int", doc: head + "worker:\n  count: 1e1\n", wantErr: "worker.count: 1e1: exponents"},
		{name: "exponent cpu", doc: head + "master:\n  cpu: 1e-300\n", wantErr: "master.cpu: 1e-300: exponents"},
		{name: "nan", doc: head + "master:\n  cpu: .nan\n", wantErr: "master.cpu: .nan: not a finite number"},
		{name: "inf", doc: head + "master:\n  cpu: -.Inf\n", wantErr: "master.cpu: -.Inf: not a finite number"},
		{name: "json exponent", doc: `{"apiVersion":"onekube.io/v1alpha1","kind":"Cluster","master":{"cpu":5E-1}}`, wantErr: "master.cpu: 5E-1: exponents"},
		{name: "in a list", doc: head + "worker:\n  elasticityPolicies:\n  - {type: CHANGE, adjust: 01, expression: CPU > 80}\n", wantErr: "worker.elasticityPolicies[0].adjust: 01: leading zeros"},
		{name: "every one named", doc: head + "master:\n  vcpu: 0x2\nworker:\n  count: 010\n", wantErr: "master.vcpu: 0x2: hexadecimal, octal and binary are not accepted: write the number in decimal; worker.count: 010"},
		{name: "in a text field", doc: head + "metadata:\n  description: 0x10\n", wantErr: "metadata.description: 0x10: hexadecimal"},
		{name: "quoted text", doc: head + "metadata:\n  description: \"0x10\"\n", check: func(t *testing.T, s Spec) {
			if s.Metadata.Description != "0x10" {
				t.Errorf("description %q", s.Metadata.Description)
			}
		}},
		{name: "decimal", doc: head + "master:\n  cpu: 0.5\n  memoryMB: 2048\nworker:\n  count: 0\n  cpu: 2\n", check: func(t *testing.T, s Spec) {
			if s.Master.CPU != 0.5 || s.Master.MemoryMB != 2048 || *s.Worker.Count != 0 || s.Worker.CPU != 2 {
				t.Errorf("spec %+v %+v", s.Master, s.Worker)
			}
		}},
		{name: "negative decimal", doc: head + "network:\n  id: -1\n", check: func(t *testing.T, s Spec) {
			if *s.Network.ID != -1 {
				t.Errorf("network.id %d", *s.Network.ID)
			}
		}},
		{name: "whole float", doc: head + "worker:\n  count: 3.0\n", check: func(t *testing.T, s Spec) {
			if *s.Worker.Count != 3 {
				t.Errorf("count %d", *s.Worker.Count)
			}
		}},
		{name: "anchored", doc: head + "master:\n  vcpu: &n 0x4\nworker:\n  vcpu: *n\n", wantErr: "master.vcpu: 0x4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSpec([]byte(tc.doc))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrSpec) {
					t.Fatalf("err = %v, want ErrSpec containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, s)
		})
	}
}
