package flow

import (
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// parseOneTemplate reads OpenNebula template text the way oned's lexer and
// grammar do (src/parsers/template_parser.l, template_syntax.y): a quoted
// value is the longest match of "([^"]|\")*" and only \" is unescaped.
// Test code, independent of the writer.
func parseOneTemplate(t *testing.T, text string) map[string]string {
	t.Helper()
	out := map[string]string{}
	quoted := regexp.MustCompile(`^"(?:[^"]|\\")*"`)
	quoted.Longest()
	name := regexp.MustCompile(`^[A-Za-z0-9_]+`)
	s := text
	skip := func() { s = strings.TrimLeftFunc(s, unicode.IsSpace) }
	value := func() string {
		skip()
		m := quoted.FindString(s)
		if m == "" {
			t.Fatalf("no quoted value at %q", s)
		}
		s = s[len(m):]
		return strings.ReplaceAll(m[1:len(m)-1], `\"`, `"`)
	}
	expect := func(tok string) {
		skip()
		if !strings.HasPrefix(s, tok) {
			t.Fatalf("want %q at %q", tok, s)
		}
		s = s[len(tok):]
	}
	for skip(); s != ""; skip() {
		key := name.FindString(s)
		if key == "" {
			t.Fatalf("no attribute name at %q", s)
		}
		s = s[len(key):]
		expect("=")
		skip()
		if !strings.HasPrefix(s, "[") {
			out[key] = value()
			continue
		}
		s = s[1:]
		for {
			skip()
			sub := name.FindString(s)
			s = s[len(sub):]
			expect("=")
			out[key+"/"+sub] = value()
			skip()
			if strings.HasPrefix(s, "]") {
				s = s[1:]
				break
			}
			expect(",")
		}
	}
	return out
}

func TestOneTemplateQuoting(t *testing.T) {
	t.Parallel()
	values := []string{"", "plain", `with "quotes"`, `back\slash`, `\"`, "multi\nline", "a = [b], c", "$USER[SSH_PUBLIC_KEY]", "#not a comment"}
	var tmpl oneTemplate
	for i, v := range values {
		tmpl = append(tmpl, pair("A"+string(rune('A'+i)), v))
	}
	tmpl = append(tmpl, vector("CONTEXT", pair("X", `q"uote`), pair("Y", "a,b]")), vector("EMPTY"))
	text, err := tmpl.text()
	if err != nil {
		t.Fatal(err)
	}
	got := parseOneTemplate(t, text)
	for i, v := range values {
		if k := "A" + string(rune('A'+i)); got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
	if got["CONTEXT/X"] != `q"uote` || got["CONTEXT/Y"] != "a,b]" {
		t.Errorf("vector: %v", got)
	}
	for _, bad := range []oneTemplate{{pair("A", `ends\`)}, {pair("A", "x]]>y")}, {pair("BAD-KEY", "x")}, {vector("V", pair("k-2", "x"))}} {
		if _, err := bad.text(); err == nil {
			t.Errorf("%v rendered", bad)
		}
	}
}

// TestVMTemplateContract: the VM template's CONTEXT carries what the agent
// relies on and never REPORT_READY.
func TestVMTemplateContract(t *testing.T) {
	t.Parallel()
	for name, spec := range testSpecs(t) {
		for _, role := range []string{RoleMaster, RoleWorker} {
			text, err := RenderVMTemplate(spec, role)
			if err != nil {
				t.Fatal(err)
			}
			got := parseOneTemplate(t, text)
			want := map[string]string{
				"CONTEXT/NETWORK": "YES", "CONTEXT/TOKEN": "YES", "CONTEXT/SSH_PUBLIC_KEY": "$USER[SSH_PUBLIC_KEY]",
				"CONTEXT/ONEKUBE_CONTRACT_VERSION": "1", "CONTEXT/ONEAPP_ONEFLOW_MASTER_ROLE": "$ONEAPP_ONEFLOW_MASTER_ROLE",
			}
			for _, u := range UserInputs(spec) {
				want["CONTEXT/"+u.Name] = "$" + u.Name
				want["USER_INPUTS/"+u.Name] = u.String()
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s/%s: %s = %q, want %q", name, role, k, got[k], v)
				}
			}
			for k := range got {
				if strings.Contains(k, "REPORT_READY") {
					t.Errorf("%s/%s sets %s", name, role, k)
				}
			}
			r, _ := spec.Role(role)
			if got["MEMORY"] != itoa(r.MemoryMB) || got["NAME"] != spec.TemplateName(role) {
				t.Errorf("%s/%s: MEMORY %s NAME %s", name, role, got["MEMORY"], got["NAME"])
			}
		}
	}
	d := DefaultSpec()
	m, _ := RenderVMTemplate(d, RoleMaster)
	w, _ := RenderVMTemplate(d, RoleWorker)
	if pm, pw := parseOneTemplate(t, m), parseOneTemplate(t, w); pm["CPU"] != "1" || pm["VCPU"] != "2" || pw["CPU"] != "2" || pw["VCPU"] != "6" || pw["MEMORY"] != "6144" {
		t.Errorf("default sizes: master %v/%v worker %v/%v/%v", pm["CPU"], pm["VCPU"], pw["CPU"], pw["VCPU"], pw["MEMORY"])
	}
}

func itoa(n int) string { return formatCPU(float64(n)) }

func FuzzOneTemplateValue(f *testing.F) {
	for _, s := range []string{"", `a"b`, `\"`, "x\ny", "[,]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		text, err := oneTemplate{pair("K", v), vector("V", pair("A", v), pair("B", "end"))}.text()
		if err != nil {
			return // refused values are documented in quoteValue
		}
		got := parseOneTemplate(t, text)
		if got["K"] != v || got["V/A"] != v || got["V/B"] != "end" {
			t.Fatalf("value %q came back as %q / %q", v, got["K"], got["V/A"])
		}
	})
}
