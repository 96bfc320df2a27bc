package flow

import (
	"strings"
	"testing"
)

func TestParseUserInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, wantErr, wantWarn string
	}{
		{in: "O|text|Pods||10.244.0.0/16"},
		{in: "M|password|Token||"},
		{in: "O|number|Port||6443"},
		{in: "O|number|Port||64.5", wantErr: "not an integer"},
		{in: "O|number-float|Ratio||0.5"},
		{in: "O|number-float|Ratio||half", wantErr: "not a number"},
		{in: "O|range|Workers|1..10|3"},
		{in: "O|range|Workers|1..10|11", wantErr: "outside 1..10"},
		{in: "O|range|Workers|10..1|", wantErr: "min is above max"},
		{in: "O|range|Workers|1-10|", wantErr: "want min..max"},
		{in: "O|range-float|Ratio|0.1..0.9|0.5"},
		{in: "O|list|CNI|flannel,calico|calico"},
		{in: "O|list|CNI|flannel,calico|cilium", wantErr: `default "cilium" is not one of`},
		{in: "O|list|CNI||", wantErr: "comma-separated list"},
		{in: "O|list-multiple|Addons|a,b,c|a,c"},
		{in: "O|list-multiple|Addons|a,b,c|a,d", wantErr: `default "d"`},
		{in: "O|boolean|Taint||YES"},
		{in: "O|boolean|Taint||yes", wantErr: "YES or NO"},
		{in: "O|fixed|Fixed||x"},
		{in: "O|network|Net||id:0", wantErr: "belongs in \"networks\""},
		{in: "O|string|x||", wantErr: "unknown type"},
		{in: "X|text|x||", wantErr: "must be M (mandatory) or O"},
		{in: "O|text|x", wantWarn: "short form"},
		{in: "O|text", wantErr: "2 |-separated fields"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			u, warns, err := ParseUserInput("NAME", tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantWarn != "" {
				if len(warns) == 0 || !strings.Contains(warns[0], tc.wantWarn) {
					t.Errorf("warnings %v, want %q", warns, tc.wantWarn)
				}
				return
			}
			if len(warns) != 0 {
				t.Errorf("warnings: %v", warns)
			}
			if u.String() != tc.in {
				t.Errorf("String() = %q, want %q", u.String(), tc.in)
			}
		})
	}
	if _, _, err := ParseUserInput("BAD-NAME", "O|text|x||"); err == nil {
		t.Error("name with - accepted")
	}
	if _, warns, _ := ParseUserInput("lower", "O|text|x||"); len(warns) == 0 {
		t.Error("lower-case name without warning")
	}
}

func TestUserInputs(t *testing.T) {
	t.Parallel()
	s := DefaultSpec()
	s.UserInputs = []UserInput{{Name: "EXTRA", Type: "text"}}
	in := UserInputs(s)
	if in[0].Name != "ONEAPP_K8S_CNI_PLUGIN" || in[len(in)-1].Name != "EXTRA" {
		t.Errorf("order: %v", in)
	}
	for _, u := range in {
		if _, _, err := ParseUserInput(u.Name, u.String()); err != nil {
			t.Errorf("%s: %v", u.Name, err)
		}
	}
}

func FuzzParseUserInput(f *testing.F) {
	for _, s := range []string{"O|text|x||", "M|list|a|b,c|b", "O|range|r|1..5|2", "O|boolean|b||YES"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, _, err := ParseUserInput("NAME", s)
		if err != nil || strings.Count(s, "|") != 4 {
			return
		}
		if u.String() != s {
			t.Fatalf("round trip: %q -> %q", s, u.String())
		}
	})
}
