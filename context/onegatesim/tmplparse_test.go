package onegatesim

import (
	"reflect"
	"testing"
)

func TestParseTemplate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   string
		want []attr
		err  string
	}{
		{"quoted", `READY="YES"`, []attr{{name: "READY", value: "YES"}}, ""},
		{"unquoted", "READY=YES", []attr{{name: "READY", value: "YES"}}, ""},
		{"names upper-cased", `ready = "YES"`, []attr{{name: "READY", value: "YES"}}, ""},
		{"a digit first gets ONE_", `1X="1"`, []attr{{name: "ONE_1X", value: "1"}}, ""},
		{"an underscore first is valid XML", `_X="1"`, []attr{{name: "_X", value: "1"}}, ""},
		{"XML first gets ONE_", `XMLA="1"`, []attr{{name: "ONE_XMLA", value: "1"}}, ""},
		{"xml in lower case does not", `xmla="1"`, []attr{{name: "XMLA", value: "1"}}, ""},
		{"escaped quote", `A="say \"hi\""`, []attr{{name: "A", value: `say "hi"`}}, ""},
		{"multiline value", "A=\"l1\nl2\"", []attr{{name: "A", value: "l1\nl2"}}, ""},
		{"empty then newline", "A=\nB=\"2\"", []attr{{name: "A"}, {name: "B", value: "2"}}, ""},
		{"lone quote is a value", `A="`, []attr{{name: "A", value: `"`}}, ""},
		{"comments and blank lines", "# c\n\nA=\"1\"\n  # d\nB=\"2\"\n", []attr{{name: "A", value: "1"}, {name: "B", value: "2"}}, ""},
		{"repeated keys kept", "A=\"1\"\nA=\"2\"", []attr{{name: "A", value: "1"}, {name: "A", value: "2"}}, ""},
		{"vector", `V = [ x = "1", Y = "2" ]`, []attr{{name: "V", vector: map[string]string{"X": "1", "Y": "2"}}}, ""},
		{"vector keeps first duplicate", `V=[A="1",A="2"]`, []attr{{name: "V", vector: map[string]string{"A": "1"}}}, ""},
		{"empty vector", `V=[]`, []attr{{name: "V", vector: map[string]string{}}}, ""},
		{"empty input", "", nil, ""},
		{"comma after value", `A="x",y"`, nil, `Parse error: syntax error, unexpected "','", expecting end of file at line 1, columns 6:7`},
		{"word without equals", `A="1" B`, nil, `Parse error: syntax error, unexpected end of file, expecting "'='" or "'=' followed by a newline" at line 1, columns 7:8`},
		{"second equals (5.12 escaping)", `A="a="b"`, nil, `Parse error: syntax error, unexpected end of file, expecting "'='" or "'=' followed by a newline" at line 1, columns 8:9`},
		{"blank line quote", "A=\"1\"\n\"\nB=\"2\"", nil, ""},
		{"unquoted spaces", "A=with spaces", nil, `Parse error: syntax error, unexpected end of file, expecting "'='" or "'=' followed by a newline" at line 1, columns 8:14`},
		{"vector missing value", `V=[A=]`, nil, "Parse error: syntax error, unexpected end of file, expecting attribute value at line 1, columns 6:7"},
		{"leading equals", `=x`, nil, `Parse error: syntax error, unexpected "'='", expecting end of file at line 1, columns 1:2`},
		{"cdata aborts", `A=<![CDATA[x]]>`, nil, "Parse error: Unknown error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseTemplate(c.in)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("parseTemplate(%q) error = %v; want %q", c.in, err, c.err)
				}
				return
			}
			if c.name == "blank line quote" { // the stray quote is skipped by flex's default rule
				if err != nil || len(got) != 2 {
					t.Fatalf("parseTemplate(%q) = %v, %v", c.in, got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseTemplate(%q): %v", c.in, err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("parseTemplate(%q) = %#v; want %#v", c.in, got, c.want)
			}
		})
	}
}
