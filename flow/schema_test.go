package flow

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// schemaEval is a small JSON Schema (draft-07) evaluator for the keywords
// the OneFlow reference schemas use. It is test code, written apart from
// Validate, so rendered templates are checked by a second, independent
// reading of the server's rules (testdata/oneflow-schema-{6,7}.json, copied
// from shared/reference).
type schemaEval struct{ root map[string]any }

func loadSchema(t testing.TB, path string) schemaEval {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		t.Fatal(err)
	}
	return schemaEval{root}
}

var ignoredKeywords = []string{"$schema", "$id", "$comment", "title", "description", "default", "additionalProperties"}

func (e schemaEval) check(s map[string]any, v any, path string) []string {
	var errs []string
	fail := func(format string, a ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, a...)) }
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		kw := s[k]
		switch {
		case slices.Contains(ignoredKeywords, k) || strings.HasPrefix(k, "x-"):
			if k == "additionalProperties" && kw != true {
				fail("additionalProperties other than true is not supported")
			}
		case k == "$ref":
			ref := kw.(string)
			name, ok := strings.CutPrefix(ref, "#/definitions/")
			if !ok {
				fail("unsupported $ref %s", ref)
				continue
			}
			errs = append(errs, e.check(e.root["definitions"].(map[string]any)[name].(map[string]any), v, path)...)
		case k == "type":
			if !schemaType(kw.(string), v) {
				fail("want %s, got %T", kw, v)
			}
		case k == "enum":
			if !slices.ContainsFunc(kw.([]any), func(x any) bool { return x == v }) {
				fail("%v not in enum %v", v, kw)
			}
		case k == "const":
			if kw != v {
				fail("%v != const %v", v, kw)
			}
		case k == "required":
			if o, ok := v.(map[string]any); ok {
				for _, r := range kw.([]any) {
					if _, has := o[r.(string)]; !has {
						fail("missing required %s", r)
					}
				}
			}
		case k == "properties":
			if o, ok := v.(map[string]any); ok {
				for name, sub := range kw.(map[string]any) {
					if pv, has := o[name]; has {
						errs = append(errs, e.check(sub.(map[string]any), pv, path+"."+name)...)
					}
				}
			}
		case k == "items":
			if a, ok := v.([]any); ok {
				for i, x := range a {
					errs = append(errs, e.check(kw.(map[string]any), x, fmt.Sprintf("%s[%d]", path, i))...)
				}
			}
		case k == "minItems":
			if a, ok := v.([]any); ok && int64(len(a)) < num(kw) {
				fail("fewer than %v items", kw)
			}
		case k == "minLength":
			if str, ok := v.(string); ok && int64(len(str)) < num(kw) {
				fail("shorter than %v", kw)
			}
		case k == "minimum":
			if n, ok := v.(json.Number); ok {
				if f, _ := n.Float64(); f < float64(num(kw)) {
					fail("%v below minimum %v", n, kw)
				}
			}
		case k == "pattern":
			if str, ok := v.(string); ok && !regexp.MustCompile(kw.(string)).MatchString(str) {
				fail("%q does not match %s", str, kw)
			}
		case k == "allOf":
			for _, sub := range kw.([]any) {
				errs = append(errs, e.check(sub.(map[string]any), v, path)...)
			}
		case k == "oneOf":
			n := 0
			for _, sub := range kw.([]any) {
				if len(e.check(sub.(map[string]any), v, path)) == 0 {
					n++
				}
			}
			if n != 1 {
				fail("matches %d of oneOf, want 1", n)
			}
		case k == "not":
			if len(e.check(kw.(map[string]any), v, path)) == 0 {
				fail("matches a not schema")
			}
		case k == "if":
			branch := "else"
			if len(e.check(kw.(map[string]any), v, path)) == 0 {
				branch = "then"
			}
			if sub, ok := s[branch].(map[string]any); ok {
				errs = append(errs, e.check(sub, v, path)...)
			}
		case k == "then" || k == "else":
		case k == "contains":
			if a, ok := v.([]any); ok && !slices.ContainsFunc(a, func(x any) bool { return len(e.check(kw.(map[string]any), x, path)) == 0 }) {
				fail("no item matches contains")
			}
		case k == "propertyNames":
			if o, ok := v.(map[string]any); ok {
				for name := range o {
					errs = append(errs, e.check(kw.(map[string]any), name, path+"."+name)...)
				}
			}
		case k == "definitions":
		default:
			fail("unsupported schema keyword %q", k)
		}
	}
	return errs
}

func num(v any) int64 { n, _ := strconv.ParseInt(string(v.(json.Number)), 10, 64); return n }

func schemaType(t string, v any) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		_, err := strconv.ParseInt(string(n), 10, 64)
		return ok && err == nil
	case "number":
		_, ok := v.(json.Number)
		return ok
	}
	return false
}

func schemaErrors(t testing.TB, v OneFlowVersion, doc []byte) []string {
	t.Helper()
	e := loadSchema(t, fmt.Sprintf("testdata/oneflow-schema-%d.json", v))
	var val any
	dec := json.NewDecoder(strings.NewReader(string(doc)))
	dec.UseNumber()
	if err := dec.Decode(&val); err != nil {
		t.Fatal(err)
	}
	return e.check(e.root, val, "$")
}

// TestRenderedMatchesSchema: every rendered template passes the reference
// JSON Schema of its version.
func TestRenderedMatchesSchema(t *testing.T) {
	t.Parallel()
	for name, spec := range testSpecs(t) {
		for _, v := range []OneFlowVersion{Version6, Version7} {
			t.Run(fmt.Sprintf("%s/%d", name, v), func(t *testing.T) {
				doc, err := RenderService(spec, v)
				if err != nil {
					t.Fatal(err)
				}
				if errs := schemaErrors(t, v, doc); len(errs) > 0 {
					t.Errorf("schema errors:\n%s", strings.Join(errs, "\n"))
				}
			})
		}
	}
}

// TestSchemaEvaluatorFails keeps the evaluator honest: documents the
// schemas reject are rejected.
func TestSchemaEvaluatorFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v   OneFlowVersion
		doc string
	}{
		{Version7, `{"name":"x","roles":[{"name":"a","type":"vm"}]}`},
		{Version7, `{"name":"x","roles":[{"name":"a-b","type":"vm","template_id":1}]}`},
		{Version7, `{"name":"x","roles":[{"name":"a","type":"vm","template_id":1,"elasticity_policies":[{"type":"CHANGE","adjust":1,"expression":"x>1"}]}]}`},
		{Version7, `{"name":"x","roles":[{"name":"a","type":"vr","template_id":1,"cardinality":2,"template_contents":{"NIC":[{"NETWORK_ID":"0"}]}}]}`},
		{Version6, `{"name":"x","roles":[{"name":"a","vm_template":1,"scheduled_policies":[{"type":"CHANGE","adjust":1}]}],"deployment":"fast"}`},
		{Version6, `{"roles":[]}`},
	} {
		if errs := schemaErrors(t, tc.v, []byte(tc.doc)); len(errs) == 0 {
			t.Errorf("%s: schema %d accepted it", tc.doc, tc.v)
		}
	}
}
