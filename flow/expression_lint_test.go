package flow

import (
	"strings"
	"testing"
)

// The grouping OneFlow's grammar gives (grammar.treetop): && and || at one
// precedence, grouped from the right; '!' over the whole rest.
func TestParseExpressionGrouping(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"CPU > 80":                     "CPU > 80",
		" A>5&&B>1||C>1 ":              "A > 5 && (B > 1 || C > 1)",
		"A > 5 || B > 1 && C > 1":      "A > 5 || (B > 1 && C > 1)",
		"(A > 5 && B > 1) || C > 1":    "(A > 5 && B > 1) || C > 1",
		"A > 1 & B > 1 | C > 1":        "A > 1 & (B > 1 | C > 1)",
		"A > 1 && B > 1 && C > 1":      "A > 1 && (B > 1 && C > 1)",
		"!A > 1 && B > 2":              "!(A > 1 && B > 2)",
		"! (A > 1) && B > 2":           "!((A > 1) && B > 2)",
		"(!(A > 1)) && B > 2":          "(!(A > 1)) && B > 2",
		"!!A > 1":                      "!(!(A > 1))",
		`"cpu" >= -1.5`:                `"cpu" >= -1.5`,
		"( ( A = 1 ) )":                "((A = 1))",
		"A <> 1 || !(B != 2)":          "A <> 1 || (!(B != 2))",
		"X_1 < 2 && (Y > 1 || Z == 3)": "X_1 < 2 && (Y > 1 || Z == 3)",
	}
	for in, want := range cases {
		n := parseExpression(in)
		if n == nil {
			t.Errorf("%q did not parse", in)
			continue
		}
		if got := n.String(); got != want {
			t.Errorf("%q groups as %q, want %q", in, got, want)
		}
	}
	for _, bad := range []string{"", "CPU", "A > 1 &&", "(A > 1", "A > 1 AND B > 1", "!"} {
		if n := parseExpression(bad); n != nil {
			t.Errorf("%q parsed as %s", bad, n)
		}
	}
}

func TestLintExpression(t *testing.T) {
	t.Parallel()
	cases := []struct {
		expr string
		want []string // substrings, one per finding, errors prefixed "E:"
	}{
		{"CPU > 80", nil},
		{"(A > 5 && B > 1) || C > 1", nil},
		{"A > 5 && B > 1 && C > 1", nil},
		{"A > 5 && B > 1 || C > 1", []string{`means A > 5 && (B > 1 || C > 1); add parentheses`}},
		{"A > 5 || B > 1 & C > 1 || D > 1", []string{"means A > 5 || (B > 1 & (C > 1 || D > 1))"}},
		{"!(CPU > 80)", nil},
		{"(!(MEMORY > 80)) && (!(ID < 3))", nil},
		{"!(MEMORY > 80) && CPU < 3", []string{`E:means !((MEMORY > 80) && CPU < 3); the parentheses after '!' do not end its scope`}},
		{"!(PENDING_PODS > 0)", []string{"'!' over PENDING_PODS: a comparison with an attribute no RUNNING VM"}},
		{`!("k8s_load" > 1)`, []string{"'!' over K8S_LOAD"}},
		{"!A > 1 && CPU > 2", []string{"'!' negates everything after it, so \"!A > 1 && CPU > 2\" means !(A > 1 && CPU > 2); put what", "'!' over A"}},
		{"1 > 0", []string{"E:1 > 0 compares two numbers"}},
		{"CPU > 80 || 2 = 2", []string{"E:2 = 2 compares two numbers"}},
		{"does not parse", nil},
	}
	for _, c := range cases {
		got := LintExpression(c.expr)
		if len(got) != len(c.want) {
			t.Errorf("%q: %d findings %v, want %d", c.expr, len(got), got, len(c.want))
			continue
		}
		for i, w := range c.want {
			sev := Warning
			if s, ok := strings.CutPrefix(w, "E:"); ok {
				w, sev = s, Error
			}
			if got[i].severity != sev || !strings.Contains(got[i].msg, w) {
				t.Errorf("%q finding %d = %v %q, want %v %q", c.expr, i, got[i].severity, got[i].msg, sev, w)
			}
		}
	}
}

// The tree parser and CheckExpression implement one grammar: they must
// accept the same strings, and the explicit grouping must parse back to
// itself (parentheses are only added, never moved).
func FuzzParseExpression(f *testing.F) {
	for _, s := range []string{"CPU > 80", "A>5&&B>1||C>1", "!A > 1 && B > 2", "((A=1))", `"x"<'y'`, "!!!A<1|B<2", "-1.5 < -2", "(("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := parseExpression(s)
		if (n != nil) != (CheckExpression(s) == nil) {
			t.Fatalf("%q: tree %v, CheckExpression %v", s, n, CheckExpression(s))
		}
		_ = LintExpression(s)
		if n == nil {
			return
		}
		g := n.String()
		m := parseExpression(g)
		if m == nil || m.String() != g {
			t.Fatalf("%q grouped as %q, which reparses as %v", s, g, m)
		}
	})
}
