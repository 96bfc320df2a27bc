package onegatesim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// serviceSpec is an instantiated service template reduced to what
// deployment needs. It is read with the package's own code rather than
// flow's types, so it doubles as an independent check of the renderer.
type serviceSpec struct {
	name     string
	straight bool // deployment "straight"; otherwise "none"
	gate     bool // ready_status_gate
	roles    []*roleSpec
	networks map[string]netRef // service network name -> ID
	// deployErr: 7.x fill_template failed, so the service goes to
	// FAILED_DEPLOYING before any role deploys (LifeCycleManager#deploy_action).
	deployErr string
}

// netRef is a service network's ID, or null when OneFlow resolved none
// (the "id:" default, or a value with no id, template_id or reserve_from).
type netRef struct {
	id   string
	null bool
}

type roleSpec struct {
	name        string
	parents     []string
	cardinality int
	minVMs      int           // -1: unset
	maxVMs      int           // -1: no maximum
	cooldown    time.Duration // -1: unset (the server default applies)
	templateID  int
	legacy      bool // 6.x: a shallow merge, so CONTEXT replaces the template's unless APPENDed
	// text is the extra template each VM is instantiated with: 6.x's
	// vm_template_contents after resolve_attributes and resolve_networks, or
	// 7.x's template_contents after fill_template, as Hash.to_raw prints it.
	// ${role.xpath} is evaluated and oned parses it when a VM is created.
	text string
	// replaceContext: a 7.x CONTEXT that is not a hash (a converted 6.x
	// CONTEXT=[...] is a list) replaces the template's instead of merging.
	replaceContext bool
}

func decodeObject(b []byte, what string) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: decoding %s: %v", ErrBadTemplate, what, err)
	}
	if m == nil {
		return nil, fmt.Errorf("%w: %s is not a JSON object", ErrBadTemplate, what)
	}
	return m, nil
}

// specFromBody reads a validated, merged service body.
func specFromBody(body map[string]any, v version) (*serviceSpec, error) {
	s := &serviceSpec{
		name:     body["name"].(string),
		straight: body["deployment"] == "straight",
		gate:     body["ready_status_gate"] == true,
	}
	s.networks = networkRefs(body)
	roles := body["roles"].([]any)
	for _, r := range roles {
		role := r.(map[string]any)
		rs := &roleSpec{
			name: role["name"].(string), legacy: !v.flow7(),
			cardinality: role["cardinality"].(int),
			minVMs:      intOr(role["min_vms"], -1), maxVMs: intOr(role["max_vms"], -1), cooldown: -1,
		}
		if c, ok := role["cooldown"].(int); ok {
			rs.cooldown = time.Duration(c) * time.Second
		}
		for _, p := range asSlice(role["parents"]) {
			rs.parents = append(rs.parents, p.(string))
		}
		if v.flow7() {
			rs.templateID = role["template_id"].(int)
		} else {
			rs.templateID = role["vm_template"].(int)
			text, err := resolveAttributes6(role, body)
			if err == nil {
				text, err = resolveNetworks6(text, body)
			}
			if err != nil {
				return nil, err
			}
			rs.text = text
		}
		s.roles = append(s.roles, rs)
	}
	if v.flow7() {
		if err := fillTemplate7(s, body); err != nil {
			s.deployErr = err.Error()
		}
	}
	return s, nil
}

func intOr(v any, def int) int {
	if n, ok := v.(int); ok {
		return n
	}
	return def
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// networkRefs reads networks_values after the merge, as deploy_networks
// would leave them: an id is used as it is (null included), a network made
// from template_id or reserve_from gets a new ID, anything else has none.
func networkRefs(body map[string]any) map[string]netRef {
	out := map[string]netRef{}
	created := 0
	for _, e := range asSlice(body["networks_values"]) {
		m, _ := e.(map[string]any)
		for _, name := range sortedKeys(m) {
			val, _ := m[name].(map[string]any)
			_, hasID := val["id"]
			_, tmpl := val["template_id"]
			_, rsv := val["reserve_from"]
			switch {
			case hasID && val["id"] != nil:
				out[name] = netRef{id: rubyString(val["id"])}
			case !hasID && (tmpl || rsv):
				created++
				out[name] = netRef{id: strconv.Itoa(1000 + created)}
			default:
				out[name] = netRef{null: true}
			}
		}
	}
	return out
}

var dollarKey = regexp.MustCompile(`\$(\w+)`)

// resolveAttributes6 is 6.10.5's Service#resolve_attributes at allocate:
// every $KEY found in vm_template_contents is replaced, as a substring
// (so $A also rewrites $AB), by the role's custom_attrs_values, else the
// service's; then role user_inputs_values are appended as KEY="value"
// lines. A value that is not a string raises TypeError in gsub!: HTTP 500.
func resolveAttributes6(role, body map[string]any) (string, error) {
	text, _ := role["vm_template_contents"].(string)
	if text != "" {
		roleVals, _ := role["custom_attrs_values"].(map[string]any)
		svcVals, _ := body["custom_attrs_values"].(map[string]any)
		for _, m := range dollarKey.FindAllStringSubmatch(text, -1) {
			key := m[1]
			val, ok := roleVals[key]
			if !ok {
				if val, ok = svcVals[key]; !ok {
					continue
				}
			}
			str, isStr := val.(string)
			if !isStr {
				return "", uncaught(&rubyExc{"TypeError", "no implicit conversion of " + rubyClass(val) + " into String"})
			}
			var err error
			if text, err = gsub(text, "$"+key, str); err != nil {
				return "", err
			}
		}
	}
	if uv, ok := role["user_inputs_values"].(map[string]any); ok {
		for _, k := range sortedKeys(uv) {
			text += fmt.Sprintf("\n%s=\"%s\"", k, rubyString(uv[k]))
		}
	}
	return text, nil
}

// maxResolvedText bounds the text the $KEY substitutions may grow to. A
// value that contains its own $KEY doubles the text at every occurrence the
// scan found, in Ruby as here: the real server runs out of memory or time;
// the simulator stops at 1 MiB and answers the 500 the crash would be.
const maxResolvedText = 1 << 20

// gsub is String#gsub! with a literal pattern, bounded.
func gsub(text, old, repl string) (string, error) {
	if n := strings.Count(text, old); len(text)+n*(len(repl)-len(old)) > maxResolvedText {
		return "", uncaught(&rubyExc{"NoMemoryError", "failed to allocate memory"})
	}
	return strings.ReplaceAll(text, old, repl), nil
}

// resolveNetworks6 is 6.10.5's Service#resolve_networks at deploy: $NAME
// becomes the network's id (to_s, so a null id becomes ""). Without
// networks_values nothing is replaced.
func resolveNetworks6(text string, body map[string]any) (string, error) {
	nv, ok := body["networks_values"].([]any)
	if !ok {
		return text, nil
	}
	for _, m := range dollarKey.FindAllStringSubmatch(text, -1) {
		for _, e := range nv {
			em, _ := e.(map[string]any)
			net, has := em[m[1]]
			if !has {
				continue
			}
			id, _ := rubyIndex(net, "id")
			var err error
			if text, err = gsub(text, "$"+m[1], rubyString(id)); err != nil {
				return "", err
			}
			break
		}
	}
	return text, nil
}

// fillTemplate7 is 7.4.0's Service#generate_template_contents: each role's
// NIC NETWORK_ID "$Name" becomes networks_values' id for Name (null stays
// null), and the service's user_inputs_values deep-merged with the role's
// become attributes and CONTEXT[K]="$K". A NIC that is not a list, or a
// CONTEXT that is not a hash when there are inputs, raises inside; the
// server catches it as "Error generating VM template contents".
func fillTemplate7(s *serviceSpec, body map[string]any) error {
	svcInputs, _ := body["user_inputs_values"].(map[string]any)
	nets := asSlice(body["networks_values"])
	fail := fmt.Errorf("Error generating VM template contents")
	roles := body["roles"].([]any)
	for i, r := range roles {
		role := r.(map[string]any)
		tc, _ := role["template_contents"].(map[string]any)
		if tc == nil {
			tc = map[string]any{}
		}
		roleInputs, _ := role["user_inputs_values"].(map[string]any)
		if nics := tc["NIC"]; truthy(nics) {
			list, ok := nics.([]any)
			if !ok {
				return fail
			}
			for _, nic := range list {
				id, exc := rubyIndex(nic, "NETWORK_ID")
				if exc != nil {
					return fail
				}
				ref, _ := id.(string)
				m := dollarKey.FindStringSubmatch(ref)
				if m == nil {
					continue
				}
				for _, e := range nets {
					em, _ := e.(map[string]any)
					if net, has := em[m[1]]; has {
						nm, ok := nic.(map[string]any)
						v, exc := rubyIndex(net, "id")
						if !ok || exc != nil {
							return fail
						}
						nm["NETWORK_ID"] = v
						break
					}
				}
			}
		}
		if len(svcInputs) > 0 || len(roleInputs) > 0 {
			inputs := deepMerge7(orEmpty(svcInputs), orEmpty(roleInputs))
			if _, has := tc["CONTEXT"]; !has {
				tc["CONTEXT"] = map[string]any{}
			}
			ctx, ok := tc["CONTEXT"].(map[string]any)
			if !ok {
				return fail
			}
			for k, val := range inputs {
				tc[k] = val
				ctx[k] = "$" + k
			}
		}
		s.roles[i].replaceContext = tc["CONTEXT"] != nil && !isMap(tc["CONTEXT"])
		s.roles[i].text = toRaw(tc)
	}
	return nil
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// toRaw is Hash.to_raw (validator.rb @release-7.4.0): KEY = "value" lines
// with '"' escaped, a hash as a KEY = [ ... ] vector, a list as one entry
// per element. It does not escape backslashes, and nested values make
// vectors oned cannot parse: both are oned's to refuse.
func toRaw(h map[string]any) string {
	var b strings.Builder
	for _, k := range sortedKeys(h) {
		switch x := h[k].(type) {
		case map[string]any:
			inner := strings.Split(strings.TrimSuffix(toRaw(x), "\n"), "\n")
			if len(x) == 0 {
				inner = nil
			}
			b.WriteString(k + " = [\n" + strings.Join(inner, ",\n") + "\n]\n")
		case []any:
			for _, e := range x {
				b.WriteString(toRaw(map[string]any{k: e}))
			}
		default:
			b.WriteString(k + ` = "` + strings.ReplaceAll(rubyString(x), `"`, `\"`) + "\"\n")
		}
	}
	return b.String()
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

// sortedKeys returns m's keys in byte order (std::map order).
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
