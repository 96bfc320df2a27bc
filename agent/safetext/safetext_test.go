package safetext

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestHostileValue(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, in string
		limit    int
		want     string
	}{
		{"plain", "10.0.0.13", 64, "10.0.0.13"},
		{"empty", "", 64, ""},
		{"unicode kept", "nœud-ü 節點", 64, "nœud-ü 節點"},
		{"quotes kept", `say "hi"`, 64, `say "hi"`},
		{"backslash doubled", `C:\x`, 64, `C:\\x`},
		{"newline and return", "a\nlevel=ERROR msg=forged\r", 64, `a\nlevel=ERROR msg=forged\r`},
		{"tab, NUL, ESC, DEL", "\t\x00\x1b[2J\x7f", 64, `\t\x00\x1b[2J\x7f`},
		{"bidi override, line separator", "a\u202eb\u2028c", 64, `a\u202eb\u2028c`},
		{"unicode space", "a\u00a0b", 64, `a\u00a0b`},
		{"invalid UTF-8", "a\xff\xfeb", 64, `a\xff\xfeb`},
		{"U+FFFD itself is printable", "\ufffd", 64, "\ufffd"},
		{"cut marked with what is left", "0123456789", 4, "0123…(+6 bytes)"},
		{"cut on an escape's boundary", "ab\ncd", 3, "ab…(+3 bytes)"},
		{"cut on a rune's boundary", "aé", 2, "a…(+2 bytes)"},
		{"exactly at the bound", "0123", 4, "0123"},
		{"zero bound", "x", 0, "…(+1 bytes)"},
		{"negative bound", "x", -5, "…(+1 bytes)"},
		{"100 KB zone", "fe80::1%" + strings.Repeat("\n", 100_000), 16, `fe80::1%\n\n\n\n…(+99996 bytes)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := Sanitize(c.in, c.limit); got != c.want {
				t.Errorf("Sanitize(%q, %d) = %q, want %q", c.in, c.limit, got, c.want)
			}
		})
	}
}

func TestQuote(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in    string
		limit int
		want  string
	}{
		{`say "hi"`, 64, `"say \"hi\""`},
		{"a\nb", 64, `"a\nb"`},
		{"", 64, `""`},
		{"aaaaaaaaaaaa", 4, `"aaaa…(+8 bytes)"`},
	} {
		if got := Quote(c.in, c.limit); got != c.want {
			t.Errorf("Quote(%q, %d) = %s, want %s", c.in, c.limit, got, c.want)
		}
	}
	if got := Quoted(strings.Repeat("x", 10*Max)); len(got) > Max+MarkLen+2 {
		t.Errorf("Quoted is %d bytes", len(got))
	}
}

// FuzzSanitize: whatever comes in, what goes out is bounded, valid UTF-8,
// printable, and, uncut, gives the input back.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"", "10.0.0.1", "fe80::1%eth0\nlevel=ERROR", "\x00\xff\u202e\u2028\\\"'", "é", strings.Repeat("ab\n", 50)} {
		f.Add(s, 8)
		f.Add(s, Max)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		limit %= 1 << 12
		out := Sanitize(s, limit)
		if len(out) > max(limit, 0)+MarkLen {
			t.Fatalf("Sanitize(%q, %d) is %d bytes", s, limit, len(out))
		}
		if !utf8.ValidString(out) {
			t.Fatalf("Sanitize(%q, %d) = %q is not UTF-8", s, limit, out)
		}
		if i := strings.IndexFunc(out, func(r rune) bool { return !unicode.IsPrint(r) }); i >= 0 {
			t.Fatalf("Sanitize(%q, %d) = %q has an unprintable rune at %d", s, limit, out, i)
		}
		kept, cut := out, false
		if i := strings.LastIndex(out, "…(+"); i >= 0 && strings.HasSuffix(out, " bytes)") {
			kept, cut = out[:i], true
		}
		back, err := strconv.Unquote(`"` + strings.ReplaceAll(kept, `"`, `\"`) + `"`)
		if err != nil {
			t.Fatalf("Sanitize(%q, %d) = %q does not unescape: %v", s, limit, out, err)
		}
		if cut && !strings.HasPrefix(s, back) || !cut && back != s {
			t.Fatalf("Sanitize(%q, %d) = %q unescapes to %q", s, limit, out, back)
		}
		if q, err := strconv.Unquote(Quote(s, len(s)*10+10)); err != nil || q != s {
			t.Fatalf("Quote(%q) does not unquote to itself: %q, %v", s, q, err)
		}
	})
}
