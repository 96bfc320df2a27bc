package agent

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/onekube/onekube/context/onegate"
)

func TestSanitizeValue(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ in, want string }{
		"plain":          {"phase kubeadm-init: exit status 1", "phase kubeadm-init: exit status 1"},
		"breaking runes": {`a "b", [c] \d`, "a 'b'; (c) /d"},
		"kubeadm's reason, = kept": {`[ERROR CRI]: output: time="2024" level=fatal msg="x", error: exit status 1`,
			"(ERROR CRI): output: time='2024' level=fatal msg='x'; error: exit status 1"},
		"newlines":    {"line1\nline2\r\n\tline3", "line1 line2 line3"},
		"empty":       {"", "-"},
		"only blanks": {" \t\n ", "-"},
		"control":     {"a\x00b\x7fc", "a b c"},
	}
	for name, c := range cases {
		if got := SanitizeValue(c.in); got != c.want {
			t.Errorf("%s: SanitizeValue(%q) = %q, want %q", name, c.in, got, c.want)
		}
	}
	long := strings.Repeat("é", 500)
	got := SanitizeValue(long)
	if !utf8.ValidString(got) || len(got) > maxErrorValue+len("…") {
		t.Errorf("long value: %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}

// FuzzSanitizeValue: whatever an error says, the published value is
// non-empty, bounded, valid UTF-8 and free of what breaks OneGate.
func FuzzSanitizeValue(f *testing.F) {
	for _, s := range []string{"", "x", `a"b`, "a\nb", strings.Repeat("ü", 300), "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := SanitizeValue(s)
		if got == "" || len(got) > maxErrorValue+len("…") {
			t.Fatalf("length %d", len(got))
		}
		if err := onegate.CheckValue("ONEGATE_K8S_ERROR", got); err != nil {
			t.Fatalf("OneGate cannot carry %q: %v", got, err)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 %q", got)
		}
	})
}

func TestSanitizeStatus(t *testing.T) {
	t.Parallel()
	if got := SanitizeStatus("failed: a\nREADY=1"); got != "failed: a READY=1" {
		t.Errorf("got %q", got)
	}
}
