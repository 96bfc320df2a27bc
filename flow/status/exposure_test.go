package status

import (
	"bytes"
	"strings"
	"testing"
)

func TestStatusShowsExposure(t *testing.T) {
	t.Parallel()
	const open = "restricted-bypass=yes update_by_id=yes"
	const hardened = "restricted-bypass=yes update_by_id=no"
	for _, c := range []struct {
		name string
		exp  map[int]string // by master VM
		want string         // "" : no exposure line
	}{
		{"none published", nil, ""},
		{"one master", map[int]string{53: open}, "onegate exposure: " + open + " (docs/trust.md)\n"},
		{"all agree", map[int]string{49: hardened, 53: hardened, 54: hardened}, "onegate exposure: " + hardened + " (docs/trust.md)\n"},
		{"disagree", map[int]string{49: open, 53: hardened, 54: open},
			"onegate exposure: masters disagree: VM 49,54: " + open + "; VM 53: " + hardened + " (docs/trust.md)\n"},
		{"forged", map[int]string{53: "\x1b[2Jabcdef.0123456789abcdef"}, "onegate exposure: unrecognised value (docs/trust.md)\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := haReport()
			for i := range r.VMs {
				r.VMs[i].CP.Exposure = c.exp[r.VMs[i].ID]
			}
			var b bytes.Buffer
			if err := WriteTable(&b, r); err != nil {
				t.Fatal(err)
			}
			var line string
			for _, l := range strings.SplitAfter(b.String(), "\n") {
				if strings.HasPrefix(l, "onegate exposure:") {
					line = l
				}
			}
			if line != c.want {
				t.Errorf("exposure line %q, want %q\n%s", line, c.want, b.String())
			}
			if strings.Contains(b.String(), "\x1b") || strings.Contains(b.String(), "0123456789abcdef") {
				t.Errorf("a forged value reached the table:\n%q", b.String())
			}
		})
	}
}

// FuzzExposureText: whatever a sibling writes, what is shown is either the
// one published form or the fixed placeholder.
func FuzzExposureText(f *testing.F) {
	for _, s := range []string{"restricted-bypass=yes update_by_id=yes", "restricted-bypass=unknown update_by_id=no",
		"restricted-bypass=yes update_by_id=yes\n", "restricted-bypass=maybe update_by_id=yes", "", "\x1b]0;x\a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := exposureText(s)
		if got != "unrecognised value" && (got != s || !strings.HasPrefix(s, "restricted-bypass=") || strings.ContainsAny(s, "\n\r\x1b\t")) {
			t.Fatalf("exposureText(%q) = %q", s, got)
		}
	})
}
