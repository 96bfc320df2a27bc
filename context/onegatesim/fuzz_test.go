package onegatesim

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzPutBody feeds arbitrary PUT data through escape_attr and the template
// parser: no panic, and whatever parses must hold only valid names.
func FuzzPutBody(f *testing.F) {
	for _, s := range []string{"READY=YES", "A=with spaces", "A=x,y", "A=", `A="q"`, "V=[A=1,B=2]", "A=1\\nB=2",
		"# c\nA=1\n", "A=<![CDATA[x]]>", "\"\"\"", "=[]=,", "K=YWJj=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		for _, once := range []bool{true, false} {
			esc, err := escapeAttr(data, once)
			if err != nil {
				continue
			}
			attrs, err := parseTemplate(esc)
			if err != nil {
				if _, ok := err.(*ParseError); !ok {
					t.Fatalf("non-parse error %T", err)
				}
				continue
			}
			for _, a := range attrs {
				if a.name == "" || strings.ToUpper(a.name) != a.name {
					t.Fatalf("bad attribute name %q from %q", a.name, data)
				}
			}
		}
	})
}

// FuzzParseTemplate checks the parser alone is total and deterministic.
func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{`A="1"`, "A=\nB=2", `V=[X="1",Y="2"]`, `A="a\"b"`, "#x\n", "A=\"x\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		a1, e1 := parseTemplate(in)
		a2, e2 := parseTemplate(in)
		if (e1 == nil) != (e2 == nil) || len(a1) != len(a2) {
			t.Fatalf("parseTemplate(%q) not deterministic", in)
		}
	})
}

// FuzzPutRequest drives the whole HTTP handler with arbitrary PUT bodies.
func FuzzPutRequest(f *testing.F) {
	f.Add("data=READY%3DYES&type=1", "application/x-www-form-urlencoded")
	f.Add("A=x,y", "")
	f.Add("data=ROLE_NAME&type=2", "application/x-www-form-urlencoded")
	f.Add("\rROLE_NAME=x", "")
	f.Add("!ROLE_NAME=x", "")
	s := New(Options{Dir: f.TempDir(), Endpoint: "http://127.0.0.1:5030"})
	f.Cleanup(func() { s.Close() })
	if _, err := s.Instantiate([]byte(simpleTemplate("none", false, 1, 0, "")), nil); err != nil {
		f.Fatal(err)
	}
	v, _ := s.VM(100)
	f.Fuzz(func(t *testing.T, body, ctype string) {
		r := httptest.NewRequest("PUT", "/vm", strings.NewReader(body))
		r.Header.Set("X-ONEGATE-VMID", "100")
		r.Header.Set("X-ONEGATE-TOKEN", v.Token.Reveal())
		r.Header.Set("Content-Type", ctype)
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		switch w.Code {
		case http.StatusOK, http.StatusForbidden, http.StatusInternalServerError:
		default:
			t.Fatalf("PUT %q answered %d", body, w.Code)
		}
		if ut := s.UserTemplate(100); ut["ROLE_NAME"] != "master" || ut["SERVICE_ID"] != "1" {
			// Many spellings slip past the restricted check, as on the real
			// server (trust_test.go), but none without naming the attribute.
			text := strings.ToUpper(body)
			if u, err := url.QueryUnescape(body); err == nil {
				text += "\n" + strings.ToUpper(u)
			}
			if !strings.Contains(text, "ROLE_NAME") && !strings.Contains(text, "SERVICE_ID") {
				t.Fatalf("restricted attribute changed by %q: %v", body, ut)
			}
		}
	})
}

// FuzzServiceTemplate: the template reader never panics.
func FuzzServiceTemplate(f *testing.F) {
	f.Add(simpleTemplate("straight", true, 1, 2, `"master"`), `{"roles":[{"name":"worker","cardinality":3}]}`)
	f.Add(`{"name":"x","roles":[{"name":"a","vm_template":1,"vm_template_contents":"A=\"$X\""}]}`, `{"custom_attrs_values":{"X":"1"}}`)
	f.Add(template6, `{`+values6+`,"roles":[{"name":"worker","cardinality":3},{"name":"x"}]}`)
	f.Add(`{"name":"x","networks":{"P":"M|network|p||id:"},"roles":[{"name":"a","type":"vm","template_id":1,"template_contents":{"NIC":[{"NETWORK_ID":"$P"}],"CONTEXT":[1]}}]}`,
		`{"user_inputs_values":{"A":1},"networks_values":[{"P":{"template_id":"2"}}]}`)
	f.Fuzz(func(t *testing.T, tmpl, merge string) {
		for _, v := range []version{{7, 4}, {6, 10}} {
			_, _ = parseService([]byte(tmpl), []byte(merge), v)
		}
	})
}
