package onegate

import "testing"

func TestVMClaim(t *testing.T) {
	vm := &VM{UserTemplate: map[string]string{"READY": "YES", "BLANK": " \t"}}
	for _, tc := range []struct {
		name  string
		vm    *VM
		key   string
		want  string
		empty bool
	}{
		{"present", vm, "READY", "YES", false},
		{"blank", vm, "BLANK", " \t", true},
		{"missing", vm, "NOPE", "", true},
		{"nil map", &VM{}, "READY", "", true},
		{"nil VM", nil, "READY", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.vm.Claim(tc.key)
			if got := c.Unverified(); got != tc.want {
				t.Errorf("Unverified() = %q, want %q", got, tc.want)
			}
			if c.Empty() != tc.empty {
				t.Errorf("Empty() = %v, want %v", c.Empty(), tc.empty)
			}
			if c.String() != "<claim>" {
				t.Errorf("String() = %q leaks the value", c.String())
			}
		})
	}
}
