package onegatesim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// serviceSpec is a service template after the instantiate merge, reduced to
// what deployment needs. It is read with the package's own code rather than
// flow's types, so it doubles as an independent check of the renderer.
type serviceSpec struct {
	name     string
	straight bool // deployment "straight"; otherwise "none"
	gate     bool // ready_status_gate
	roles    []*roleSpec
	networks map[string]string // service network name -> id
}

type roleSpec struct {
	name        string
	parents     []string
	cardinality int
	minVMs      int
	maxVMs      int           // -1: no maximum
	cooldown    time.Duration // -1: unset
	templateID  int
	legacy      bool   // 6.x role: contents came from vm_template_contents text
	contents    []attr // template_contents / parsed vm_template_contents
	inputs      map[string]string
}

var roleNameRE = regexp.MustCompile(`^\w+$`)

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadTemplate, fmt.Sprintf(format, args...))
}

func decodeObject(b []byte, what string) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, bad("decoding %s: %v", what, err)
	}
	if m == nil {
		return nil, bad("%s is not a JSON object", what)
	}
	return m, nil
}

// parseService reads a service template (6.x or 7.x) and applies an
// instantiate merge document as OneFlow does (oneflow.md §3).
func parseService(tmpl, merge []byte, v version) (*serviceSpec, error) {
	body, err := decodeObject(tmpl, "service template")
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(merge)) > 0 {
		m, err := decodeObject(merge, "merge template")
		if err != nil {
			return nil, err
		}
		if err := applyMerge(body, m); err != nil {
			return nil, err
		}
	}
	return specFromBody(body, v)
}

// applyMerge deep-merges the instantiate document: roles by name,
// networks_values replaced by name, everything else hash-merged with arrays
// concatenated. custom_attrs_values is renamed first, as 7.x does.
func applyMerge(body, m map[string]any) error {
	renameKey(m, "custom_attrs_values", "user_inputs_values")
	if roles, ok := m["roles"]; ok {
		mr, ok := roles.([]any)
		if !ok {
			return bad("merge template: roles must be an array")
		}
		br, _ := body["roles"].([]any)
		for _, r := range mr {
			ro, ok := r.(map[string]any)
			if !ok {
				return bad("merge template: every role must be an object")
			}
			renameKey(ro, "custom_attrs_values", "user_inputs_values")
			for _, t := range br {
				if to, ok := t.(map[string]any); ok && to["name"] == ro["name"] {
					deepMerge(to, ro)
				}
			}
		}
		delete(m, "roles")
	}
	if nv, ok := m["networks_values"].([]any); ok {
		old, _ := body["networks_values"].([]any)
		body["networks_values"] = replaceByName(old, nv)
		delete(m, "networks_values")
	}
	deepMerge(body, m)
	return nil
}

func renameKey(m map[string]any, from, to string) {
	if v, ok := m[from]; ok {
		if _, has := m[to]; !has {
			m[to] = v
		}
		delete(m, from)
	}
}

func deepMerge(dst, src map[string]any) {
	for k, sv := range src {
		dv, ok := dst[k]
		switch {
		case !ok:
			dst[k] = sv
		case isMap(dv) && isMap(sv):
			deepMerge(dv.(map[string]any), sv.(map[string]any))
		case isSlice(dv) && isSlice(sv):
			dst[k] = append(dv.([]any), sv.([]any)...)
		default:
			dst[k] = sv
		}
	}
}

func isMap(v any) bool   { _, ok := v.(map[string]any); return ok }
func isSlice(v any) bool { _, ok := v.([]any); return ok }

// replaceByName merges networks_values entries ({"Name":{...}}) by name.
func replaceByName(old, repl []any) []any {
	names := map[string]bool{}
	for _, e := range repl {
		if m, ok := e.(map[string]any); ok {
			for k := range m {
				names[k] = true
			}
		}
	}
	var out []any
	for _, e := range old {
		keep := true
		if m, ok := e.(map[string]any); ok {
			for k := range m {
				keep = keep && !names[k]
			}
		}
		if keep {
			out = append(out, e)
		}
	}
	return append(out, repl...)
}

func specFromBody(body map[string]any, v version) (*serviceSpec, error) {
	name, _ := body["name"].(string)
	if name == "" {
		return nil, bad("mandatory key 'name (string)' is missing")
	}
	rawRoles, ok := body["roles"].([]any)
	if !ok || len(rawRoles) == 0 {
		return nil, bad("mandatory key 'roles (array)' is missing or empty")
	}
	roles := make([]map[string]any, len(rawRoles))
	legacy := 0
	for i, r := range rawRoles {
		m, ok := r.(map[string]any)
		if !ok {
			return nil, bad("role %d is not an object", i)
		}
		roles[i] = m
		if _, a := m["vm_template"]; a {
			legacy++
		} else if _, b := m["vm_template_contents"]; b {
			legacy++
		}
	}
	isLegacy := legacy == len(roles)
	switch {
	case legacy > 0 && !isLegacy:
		return nil, bad("roles mix 6.x keys (vm_template) and 7.x keys (template_id); OneFlow converts only all-6.x documents")
	case !isLegacy && !v.flow7():
		return nil, bad("OneFlow %s needs 6.x role keys: mandatory key 'vm_template (integer)' is missing", v)
	}

	s := &serviceSpec{name: name}
	switch d := body["deployment"]; d {
	case nil, "none":
	case "straight":
		s.straight = true
	default:
		return nil, bad("deployment %v: want none or straight", d)
	}
	s.gate, _ = body["ready_status_gate"].(bool)
	if nv := body["ready_status_gate"]; nv != nil && !isBool(nv) {
		return nil, bad("ready_status_gate must be a boolean")
	}
	var err error
	if s.networks, err = networkIDs(body); err != nil {
		return nil, err
	}

	inputsKey, valuesKey := "user_inputs", "user_inputs_values"
	if isLegacy {
		inputsKey = "custom_attrs"
		renameKey(body, "user_inputs_values", "custom_attrs_values")
		valuesKey = "custom_attrs_values"
	}
	svcValues, err := inputValues(body, inputsKey, valuesKey)
	if err != nil {
		return nil, err
	}

	seen := map[string]bool{}
	for i, r := range roles {
		rs, err := roleFromBody(r, isLegacy, v)
		if err != nil {
			return nil, fmt.Errorf("role %d: %w", i, err)
		}
		if seen[rs.name] {
			return nil, bad("role name %q is not unique", rs.name)
		}
		seen[rs.name] = true
		if isLegacy {
			renameKey(r, "user_inputs_values", "custom_attrs_values")
		}
		roleValues, err := inputValues(r, inputsKey, valuesKey)
		if err != nil {
			return nil, fmt.Errorf("role %s: %w", rs.name, err)
		}
		rs.inputs = map[string]string{}
		for k, val := range svcValues {
			rs.inputs[k] = val
		}
		for k, val := range roleValues { // the role's value wins
			rs.inputs[k] = val
		}
		if err := rs.readContents(r, s.networks); err != nil {
			return nil, fmt.Errorf("role %s: %w", rs.name, err)
		}
		s.roles = append(s.roles, rs)
	}
	return s, nil
}

func isBool(v any) bool { _, ok := v.(bool); return ok }

func roleFromBody(r map[string]any, legacy bool, v version) (*roleSpec, error) {
	name, _ := r["name"].(string)
	if !roleNameRE.MatchString(name) {
		return nil, bad("role name %q must match ^\\w+$", name)
	}
	rs := &roleSpec{name: name, legacy: legacy, maxVMs: -1, cooldown: -1}
	idKey := "template_id"
	if legacy {
		idKey = "vm_template"
	} else if t, _ := r["type"].(string); t != "vm" {
		if t == "" {
			return nil, bad("mandatory key 'type (string)' is missing")
		}
		return nil, bad("role type %q is not simulated (only vm)", t)
	}
	id, ok, err := rubyInteger(r[idKey])
	if err != nil || !ok {
		return nil, bad("mandatory key '%s (integer)' is missing or not an integer", idKey)
	}
	rs.templateID = id
	for _, p := range asSlice(r["parents"]) {
		ps, ok := p.(string)
		if !ok {
			return nil, bad("parents must be strings")
		}
		rs.parents = append(rs.parents, ps)
	}
	rs.cardinality = v.defaultCardinality()
	if n, ok, err := rubyInteger(r["cardinality"]); err != nil {
		return nil, bad("cardinality: %v", err)
	} else if ok {
		rs.cardinality = n
	}
	if n, ok, err := rubyInteger(r["min_vms"]); err != nil || n < 0 {
		return nil, bad("min_vms must be an integer >= 0")
	} else if ok {
		rs.minVMs = n
	}
	if n, ok, err := rubyInteger(r["max_vms"]); err != nil || n < 0 {
		return nil, bad("max_vms must be an integer >= 0")
	} else if ok {
		rs.maxVMs = n
	}
	if n, ok, err := rubyInteger(r["cooldown"]); err != nil || n < 0 {
		return nil, bad("cooldown must be an integer >= 0")
	} else if ok {
		rs.cooldown = time.Duration(n) * time.Second
	}
	if rs.cardinality < 0 || rs.cardinality < rs.minVMs || (rs.maxVMs >= 0 && rs.cardinality > rs.maxVMs) {
		return nil, bad("cardinality %d is outside min_vms %d .. max_vms %d", rs.cardinality, rs.minVMs, rs.maxVMs)
	}
	return rs, nil
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// inputValues checks that every declared input has a value, as the
// instantiate call requires (optional ones included), and returns them.
func inputValues(m map[string]any, inputsKey, valuesKey string) (map[string]string, error) {
	declared, _ := m[inputsKey].(map[string]any)
	values, _ := m[valuesKey].(map[string]any)
	if len(declared) > 0 && len(values) == 0 {
		return nil, ErrMissingInputs
	}
	for k := range declared {
		if _, ok := values[k]; !ok {
			return nil, fmt.Errorf("%w (%s)", ErrMissingInputs, k)
		}
	}
	out := make(map[string]string, len(values))
	for k, v := range values {
		out[k] = scalarString(v)
	}
	return out, nil
}

// networkIDs maps each service network to its ID: networks_values when
// given, else field 5 of the networks string ("M|network|desc||id:0").
func networkIDs(body map[string]any) (map[string]string, error) {
	out := map[string]string{}
	nets, _ := body["networks"].(map[string]any)
	for name, spec := range nets {
		s, _ := spec.(string)
		parts := strings.Split(s, "|")
		if len(parts) >= 5 {
			if _, id, ok := strings.Cut(parts[4], ":"); ok {
				out[name] = id
			}
		}
	}
	for _, e := range asSlice(body["networks_values"]) {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, bad("networks_values entries must be objects")
		}
		for name, val := range m {
			vm, _ := val.(map[string]any)
			out[name] = scalarString(vm["id"])
		}
	}
	return out, nil
}

// readContents turns the role's extra template into attributes: 7.x
// template_contents (an object), or 6.x vm_template_contents text with
// $KEY replaced from custom_attrs_values and network IDs before parsing.
func (rs *roleSpec) readContents(r map[string]any, networks map[string]string) error {
	if rs.legacy {
		text, _ := r["vm_template_contents"].(string)
		text = dollarKey.ReplaceAllStringFunc(text, func(m string) string {
			k := m[1:]
			if v, ok := rs.inputs[k]; ok {
				return v
			}
			if id, ok := networks[k]; ok {
				return id
			}
			return m
		})
		attrs, err := parseTemplate(text)
		if err != nil {
			return fmt.Errorf("vm_template_contents: %w", err)
		}
		rs.contents = attrs
		return nil
	}
	tc, ok := r["template_contents"]
	if !ok || tc == nil {
		return nil
	}
	m, ok := tc.(map[string]any)
	if !ok {
		return bad("template_contents must be an object")
	}
	if nic, ok := m["NIC"]; ok && !isSlice(nic) {
		// OneFlow's resolve_networks crashes on a single NIC object and the
		// service ends in FAILED_DEPLOYING.
		return bad("template_contents.NIC must be an array of NIC objects")
	}
	for _, k := range sortedKeys(m) {
		rs.contents = append(rs.contents, jsonToAttrs(k, m[k])...)
	}
	return nil
}

var dollarKey = regexp.MustCompile(`\$[A-Za-z0-9_]+`)

// jsonToAttrs converts one template_contents entry the way OneFlow's
// Hash#to_raw and oned's parser together would.
func jsonToAttrs(k string, v any) []attr {
	switch x := v.(type) {
	case map[string]any:
		vec := map[string]string{}
		for sk, sv := range x {
			vec[strings.ToUpper(sk)] = scalarString(sv)
		}
		return []attr{{name: attrName(k), vector: vec}}
	case []any:
		var out []attr
		for _, e := range x {
			out = append(out, jsonToAttrs(k, e)...)
		}
		return out
	default:
		return []attr{{name: attrName(k), value: scalarString(v)}}
	}
}

// InputDefaults returns the default of every service-level user input of a
// template (field 5 of "M|type|desc|params|default"), to build a merge
// document for templates whose inputs are all meant to keep their defaults.
func InputDefaults(template []byte) (map[string]string, error) {
	body, err := decodeObject(template, "service template")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, key := range []string{"user_inputs", "custom_attrs"} {
		m, _ := body[key].(map[string]any)
		for k, v := range m {
			s, _ := v.(string)
			parts := strings.SplitN(s, "|", 5)
			if len(parts) == 5 {
				out[k] = parts[4]
			} else {
				out[k] = ""
			}
		}
	}
	return out, nil
}
