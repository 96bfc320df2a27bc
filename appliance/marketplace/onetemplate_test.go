package marketplace

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/onekube/onekube/flow"
)

func TestParseTemplate(t *testing.T) {
	tests := map[string]struct {
		in   string
		want []Attr
		err  string
	}{
		"pair":             {in: `CPU = "1"` + "\n", want: []Attr{{Key: "CPU", Value: "1"}}},
		"escape":           {in: `D = "say \"hi\""`, want: []Attr{{Key: "D", Value: `say "hi"`}}},
		"backslash kept":   {in: `D = "a\b"`, want: []Attr{{Key: "D", Value: `a\b`}}},
		"multi-line value": {in: "D = \"a\nb\"\nE = \"c\"", want: []Attr{{Key: "D", Value: "a\nb"}, {Key: "E", Value: "c"}}},
		"vector": {in: "NIC = [\n  NAME = \"NIC0\",\n  NETWORK_ID = \"$Private\" ]\n",
			want: []Attr{{Key: "NIC", Vector: []Attr{{Key: "NAME", Value: "NIC0"}, {Key: "NETWORK_ID", Value: "$Private"}}}}},
		"empty vector": {in: "V = [ ]", want: []Attr{{Key: "V", Vector: []Attr{}}}},
		"comment":      {in: "# c\nA = \"1\" # tail\n", want: []Attr{{Key: "A", Value: "1"}}},
		"empty":        {in: "", want: nil},
		"unquoted":     {in: "A = 1", err: "line 1: want a double-quoted value"},
		"unterminated": {in: "A = \"1", err: "unterminated"},
		"nested":       {in: "A = [ B = [ ] ]", err: "double-quoted"},
		"no comma":     {in: "A = [ B = \"1\" C = \"2\" ]", err: `want ','`},
		"no equals":    {in: "A \"1\"", err: `want '='`},
		"bad name":     {in: "A-B = \"1\"", err: `want '='`},
		"unclosed":     {in: "A = [ B = \"1\"", err: `line 1`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseTemplate(tc.in)
			if tc.err != "" {
				if !errors.Is(err, ErrTemplate) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want ErrTemplate containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

// Both roles' templates as flow renders them parse, and keep their order.
func TestParseTemplateFlow(t *testing.T) {
	for _, role := range []string{flow.RoleMaster, flow.RoleWorker} {
		text, err := flow.RenderVMTemplate(flow.DefaultSpec(), role)
		if err != nil {
			t.Fatal(err)
		}
		attrs, err := ParseTemplate(text)
		if err != nil {
			t.Fatalf("%s: %v", role, err)
		}
		if attrs[0].Key != "NAME" || attrs[len(attrs)-1].Key != "INPUTS_ORDER" {
			t.Errorf("%s: first %s, last %s", role, attrs[0].Key, attrs[len(attrs)-1].Key)
		}
		if got := renderTemplate(attrs); got != text {
			t.Errorf("%s: re-rendered text differs:\n%s\nwant\n%s", role, got, text)
		}
	}
}

// renderTemplate writes attrs the way flow does, for round-trip checks.
func renderTemplate(attrs []Attr) string {
	q := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
	var b strings.Builder
	for _, a := range attrs {
		if a.Vector == nil {
			b.WriteString(a.Key + " = " + q(a.Value) + "\n")
			continue
		}
		b.WriteString(a.Key + " = [")
		for i, m := range a.Vector {
			sep := ","
			if i == len(a.Vector)-1 {
				sep = " ]"
			}
			b.WriteString("\n  " + m.Key + " = " + q(m.Value) + sep)
		}
		if len(a.Vector) == 0 {
			b.WriteString(" ]")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func FuzzParseTemplate(f *testing.F) {
	for _, role := range []string{flow.RoleMaster, flow.RoleWorker} {
		text, err := flow.RenderVMTemplate(flow.DefaultSpec(), role)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(text)
	}
	f.Add("A = [ ]\n# c\nB = \"x\\\"y\"")
	f.Fuzz(func(t *testing.T, text string) {
		attrs, err := ParseTemplate(text)
		if err != nil {
			return
		}
		// What parses re-renders to text that parses to the same attributes,
		// unless a value ends in a backslash (which would escape its quote).
		for _, a := range attrs {
			for _, v := range append([]Attr{a}, a.Vector...) {
				if strings.HasSuffix(v.Value, `\`) {
					return
				}
			}
		}
		again, err := ParseTemplate(renderTemplate(attrs))
		if err != nil {
			t.Fatalf("re-rendered text does not parse: %v", err)
		}
		if !reflect.DeepEqual(again, attrs) && !(len(again) == 0 && len(attrs) == 0) {
			t.Errorf("round trip changed %#v into %#v", attrs, again)
		}
	})
}
