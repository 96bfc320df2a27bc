package onegatesim

import (
	"regexp"
	"strings"
)

// 7.x still takes 6.x documents: ServiceTemplate.validate converts one whose
// every role has vm_template or vm_template_contents (old_format?) before it
// checks it (convert_template, service_template.rb @release-7.4.0). Because
// the converted document is what gets stored and deployed, a 6.x template on
// a 7.x server behaves as 7.x from then on: its CONTEXT merges instead of
// replacing, its inputs reach CONTEXT, and its text contents go through a
// converter much looser than oned's parser.

// oldFormat is old_format?: every role carries a 6.x key.
func oldFormat(body map[string]any) bool {
	roles, ok := body["roles"].([]any)
	if !ok {
		return false
	}
	for _, r := range roles {
		m, ok := r.(map[string]any)
		if !ok {
			return false
		}
		_, a := m["vm_template"]
		_, b := m["vm_template_contents"]
		if !a && !b {
			return false
		}
	}
	return true
}

// convertTemplate is convert_template. Role custom_attrs_values are deleted
// without being carried over (a quirk of the real code); the service's
// become user_inputs_values. A vm_template without to_i fails the whole
// conversion, and validate then raises a NoMethodError of its own (it calls
// Validator::ParseException as a method): HTTP 500.
func convertTemplate(body map[string]any) error {
	roles, _ := body["roles"].([]any)
	for _, r := range roles {
		role := r.(map[string]any)
		id, exc := rubyToIValue(role["vm_template"])
		if exc != nil {
			return uncaught(noMethod("ParseException", "Validator"))
		}
		role["template_id"] = id
		role["type"] = "vm"
		if ca := role["custom_attrs"]; truthy(ca) {
			role["user_inputs"] = ca
		}
		if c := role["vm_template_contents"]; truthy(c) {
			text, ok := c.(string)
			if !ok {
				return uncaught(noMethod("ParseException", "Validator"))
			}
			role["template_contents"] = upgradeTemplateContents(text)
		}
		delete(role, "vm_template")
		for _, k := range []string{"vm_template_contents", "custom_attrs", "custom_attrs_values"} {
			if truthy(role[k]) {
				delete(role, k)
			}
		}
	}
	if ca := body["custom_attrs"]; truthy(ca) {
		body["user_inputs"] = ca
		delete(body, "custom_attrs")
	}
	if cv := body["custom_attrs_values"]; truthy(cv) {
		body["user_inputs_values"] = cv
		delete(body, "custom_attrs_values")
	}
	return nil
}

var listSep = regexp.MustCompile(`\s*,\s*`)

// upgradeTemplateContents is upgrade_template_contents: each line (a
// newline inside [...] does not end one) with an '=' becomes KEY => value
// with every '"' removed; a [A=1, B=2] value becomes a one-element list of
// a hash; a repeated key collects its values in a list.
func upgradeTemplateContents(text string) map[string]any {
	out := map[string]any{}
	for _, line := range splitOutsideBrackets(text) {
		if !strings.Contains(line, "=") {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		key := strings.TrimSpace(k)
		val := strings.ReplaceAll(strings.TrimSpace(v), `"`, "")
		var value any = val
		if strings.HasPrefix(val, "[") && strings.HasSuffix(val, "]") && len(val) >= 2 {
			h := map[string]any{}
			for _, el := range rubyTrimEmpty(listSep.Split(val[1:len(val)-1], -1)) {
				sk, sv, found := strings.Cut(el, "=")
				if !found {
					h[strings.TrimSpace(sk)] = nil
					continue
				}
				h[strings.TrimSpace(sk)] = strings.TrimSpace(sv)
			}
			value = h
		}
		switch prev, ok := out[key]; {
		case !ok:
			out[key] = value
		case isSlice(prev):
			out[key] = append(prev.([]any), value)
		default:
			out[key] = []any{prev, value}
		}
	}
	// A lone vector is wrapped in a list, as the real code does by building
	// [hash] before taking .first back out of it only for repeated keys.
	for k, v := range out {
		if isMap(v) {
			out[k] = []any{v}
		}
	}
	return out
}

// splitOutsideBrackets is split(/\n(?![^\[]*\])/): a newline splits unless
// a ']' follows it before any '['.
func splitOutsideBrackets(s string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '\n' {
			continue
		}
		j := strings.IndexAny(s[i+1:], "[]")
		if j >= 0 && s[i+1+j] == ']' {
			continue
		}
		parts = append(parts, s[start:i])
		start = i + 1
	}
	parts = append(parts, s[start:])
	return rubyTrimEmpty(parts)
}

// rubyTrimEmpty drops trailing empty strings, as String#split does.
func rubyTrimEmpty(parts []string) []string {
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}
