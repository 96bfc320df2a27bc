package onegatesim

import "testing"

func TestEscapeAttr(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, want, want512 string
	}{
		{"simple", "READY=YES", `READY="YES"`, `READY="YES"`},
		{"spaces", "A=with spaces", `A="with spaces"`, `A="with spaces"`},
		{"prequoted", `A="q"`, `A="q"`, `A="q"`},
		{"equals in value", "A=a=b", `A="a=b"`, `A="a="b"`},
		{"base64 padding", "K=YWJj==", `K="YWJj=="`, `K="YWJj="="`},
		{"comma breaks it", "A=x,y", `A="x",y"`, `A="x",y"`},
		{"empty value", "A=", `A="`, `A="`},
		{"two lines", "A=1\nB=2", "A=\"1\"\nB=\"2\"", "A=\"1\"\nB=\"2\""},
		{"literal backslash-n", `A=1\nB=2`, "A=\"1\"\nB=\"2\"", "A=\"1\"\nB=\"2\""},
		{"trailing newline", "READY=YES\n", "READY=\"YES\"\n", "READY=\"YES\"\n"},
		{"blank line between", "A=1\n\nB=2", "A=\"1\"\n\"\nB=\"2\"", "A=\"1\"\n\"\nB=\"2\""},
		// 6.0's fix keeps the second '=' of a vector unquoted: the comma did
		// not end the quoted section, so B's value swallows the quote.
		{"vector", "V=[A=1,B=2]", `V=[A="1",B=2"]`, `V=[A="1",B="2"]`},
		{"bare name", "READY", "READY", "READY"},
		{"empty", "", "", ""},
		// Ruby's attr[-1]: the first character looks back at the last one.
		{"leading comma, quote at end", `,A="x"`, `,A="x"`, `,A="x"`},
		{"leading comma", `,A=x`, `",A="x"`, `",A="x"`},
		{"brackets in value", "A=x[1]", `A="x"[1"]`, `A="x"[1"]`},
		{"unicode", "A=héllo wörld", `A="héllo wörld"`, `A="héllo wörld"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := escapeAttr(c.in, true)
			if err != nil || got != c.want {
				t.Errorf("6.0+: escapeAttr(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
			got, err = escapeAttr(c.in, false)
			if err != nil || got != c.want512 {
				t.Errorf("5.12: escapeAttr(%q) = %q, %v; want %q", c.in, got, err, c.want512)
			}
		})
	}
	if _, err := escapeAttr("A=\xff", true); err == nil {
		t.Error("invalid UTF-8 accepted; Ruby's split raises")
	}
}
