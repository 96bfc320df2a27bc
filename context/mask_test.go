package context

import (
	"regexp"
	"strings"
	"testing"
)

const maskToken = "abcdef.0123456789abcdef"

func TestMaskTokens(t *testing.T) {
	t.Parallel()
	known := NewSecret(maskToken)
	M := Mask
	for _, tc := range []struct {
		name, in, want string
	}{
		{"known whole", "kubeadm join --token " + maskToken, "kubeadm join --token " + M},
		{"known upper-cased", "TOKEN=ABCDEF.0123456789ABCDEF", "TOKEN=" + M},
		{"known half alone", "secret 0123456789abcdef leaked", "secret " + M + " leaked"},
		{"known half embedded", "xx0123456789abcdefyy", "xx" + M + "yy"},
		{"known half embedded, upper", "XX0123456789ABCDEFYY", "XX" + M + "YY"},
		{"half next to its ID", "id abcdef:0123456789ABCDEF", "id abcdef:" + M},
		{"half glued to its ID", "abcdef0123456789abcdef!", "abcdef" + M + "!"},
		{"other token", "token zyxwvu.9876543210zyxwvu expired", "token " + M + " expired"},
		{"other token upper", "TOKEN ZYXWVU.9876543210ZYXWVU", "TOKEN " + M},
		{"other token in a word", "Xqwerty.0000000000aaaaaaZ", "X" + M + "Z"},
		{"two tokens sharing a half", "abcdef.0123456789abcdef.0123456789abcdef", M},
		{"other half alone", "secret=9876543210zyxwvu; retry", "secret=" + M + "; retry"},
		{"other half upper", "secret=9876543210ZYXWVU; retry", "secret=" + M + "; retry"},
		{"half letters only", "half abcdefghijklmnop", "half " + M},
		{"half next to upper and _", "A9876543210zyxwvu_B", "A" + M + "_B"},
		{"names keep hyphens", "k8s-worker-0 prod-16characters", "k8s-worker-0 prod-16characters"},
		{"shorter and longer runs stay", "sha256:" + strings.Repeat("ab", 32) + " 15chars15chars1 17chars17chars17c", "sha256:" + strings.Repeat("ab", 32) + " 15chars15chars1 17chars17chars17c"},
		{"token ID alone stays", `token id "abcdef" is invalid for this cluster or it has expired. Use "kubeadm token create"`, `token id "abcdef" is invalid for this cluster or it has expired. Use "kubeadm token create"`},
		{"dates and lists stay", "2026-11-22T12:40:00Z 12 13 worker-9", "2026-11-22T12:40:00Z 12 13 worker-9"},
		{"non-ASCII around", "é0123456789ABCDEFé", "é" + M + "é"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MaskTokens(tc.in, known); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
	if got := MaskTokens("a OneGate token s3cr3t-Value here", NewSecret("S3CR3T-value")); got != "a OneGate token "+Mask+" here" {
		t.Errorf("a known non-token secret: %q", got)
	}
}

var shaped = regexp.MustCompile(`(?i)[a-z0-9]{6}\.[a-z0-9]{16}`)

func FuzzMaskTokens(f *testing.F) {
	for _, s := range []string{"", maskToken, "a 0123456789ABCDEF b", "xxabcdef.0123456789abcdefyy", "é0123456789abcdefé", "abcdef=0123456789abcdef"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := MaskTokens(s, NewSecret(maskToken))
		if shaped.MatchString(got) || strings.Contains(strings.ToLower(got), "0123456789abcdef") {
			t.Fatalf("a token survived: %q -> %q", s, got)
		}
		if !shaped.MatchString(s) && !strings.Contains(strings.ToLower(s), "0123456789abcdef") && !strings.Contains(strings.ToLower(s), "abcdef") && !hasRun16(s) && got != s {
			t.Fatalf("text without a token changed: %q -> %q", s, got)
		}
	})
}

// hasRun16 is markRuns's rule written the slow way, as an oracle.
func hasRun16(s string) bool {
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`[A-Za-z0-9]+`), regexp.MustCompile(`[a-z0-9]+`), regexp.MustCompile(`[A-Z0-9]+`),
	} {
		for _, m := range re.FindAllString(s, -1) {
			if len(m) == 16 {
				return true
			}
		}
	}
	return false
}
