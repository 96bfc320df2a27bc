package onegatesim

import (
	"encoding/json"
	"strings"
)

// How OneFlow's instantiate merges the user's document into the stored
// template (ServiceTemplate#instantiate). The releases disagree:
//   - 7.x matches roles by name and replaces networks_values entries by name
//     (handle_nested_values), then deep-merges the rest with arrays
//     concatenated (Hash#deep_merge, validator.rb @release-7.4.0);
//   - 5.12 to 6.10 deep-merge everything, arrays element by element by
//     position (Hash#deep_merge, validator.rb @release-6.10.5): the merge's
//     first role lands on the template's first role whatever its name;
//   - 5.10 replaces top-level keys (Hash#merge in oneflow-server.rb).

// mergeInstantiate merges m into a copy of body as v's OneFlow does.
func mergeInstantiate(body, m map[string]any, v version) (map[string]any, error) {
	body = deepCopy(body).(map[string]any)
	m = deepCopy(m).(map[string]any)
	switch {
	case v.flow7():
		if err := handleNested7(body, m); err != nil {
			return nil, err
		}
		return deepMerge7(body, m), nil
	case v.less(5, 12):
		for k, val := range m {
			body[k] = val
		}
		return body, nil
	}
	return deepMerge6(body, m), nil
}

// deepMerge6 is the 5.12 to 6.10 Hash#deep_merge, aliasing included: target
// is a shallow copy, so writing target[k][i] writes into the template's own
// array (or into the merge's, once an element that is not a pair of hashes
// has made target[k] the merge's array).
func deepMerge6(self, other map[string]any) map[string]any {
	target := make(map[string]any, len(self))
	for k, v := range self {
		target[k] = v
	}
	for k, ov := range other {
		sv := self[k]
		switch {
		case isMap(ov) && isMap(sv):
			target[k] = deepMerge6(sv.(map[string]any), ov.(map[string]any))
		case isSlice(ov) && isSlice(sv):
			sa, oa := sv.([]any), ov.([]any)
			for i, elem := range oa {
				if i < len(sa) && isMap(sa[i]) && isMap(elem) {
					merged := deepMerge6(sa[i].(map[string]any), elem.(map[string]any))
					if t := target[k].([]any); i < len(t) {
						t[i] = merged
					}
				} else {
					target[k] = oa
				}
			}
		default:
			target[k] = ov
		}
	}
	return target
}

// deepMerge7 is 7.x's Hash#deep_merge with merge_array: arrays are
// concatenated, and de-duplicated when every element is a hash.
func deepMerge7(self, other map[string]any) map[string]any {
	target := make(map[string]any, len(self))
	for k, v := range self {
		target[k] = v
	}
	for k, ov := range other {
		cur := target[k]
		switch {
		case isMap(ov) && isMap(cur):
			target[k] = deepMerge7(cur.(map[string]any), ov.(map[string]any))
		case isSlice(ov) && isSlice(cur):
			merged := append(append([]any{}, cur.([]any)...), ov.([]any)...)
			target[k] = uniqHashes(merged)
		default:
			target[k] = ov
		}
	}
	return target
}

// uniqHashes is Array#uniq, applied only when every element is a hash.
func uniqHashes(a []any) []any {
	for _, e := range a {
		if !isMap(e) {
			return a
		}
	}
	seen := map[string]bool{}
	out := a[:0:0]
	for _, e := range a {
		b, _ := json.Marshal(e) // sorted keys: equal hashes give equal bytes
		if !seen[string(b)] {
			seen[string(b)] = true
			out = append(out, e)
		}
	}
	return out
}

// handleNested7 is handle_nested_values (7.x): networks_values entries
// replace the template's entry of the same (first) name or are appended,
// and roles are merged into the template's role of the same name (unknown
// names are dropped). Shapes Ruby cannot iterate raise, and instantiate
// rescues nothing but validation errors: HTTP 500.
func handleNested7(tmpl, extra map[string]any) error {
	extraRoles, hasRoles := extra["roles"]
	if !hasRoles {
		extraRoles = []any{}
	}
	// The route has already refused networks_values that is not an array
	// of hashes.
	if list, _ := extra["networks_values"].([]any); len(list) > 0 {
		tnets, _ := tmpl["networks_values"].([]any)
		for _, en := range list {
			em, ok := en.(map[string]any)
			if !ok || len(em) == 0 {
				continue
			}
			name := firstKey(em)
			replaced := false
			for i, tn := range tnets {
				if tm, ok := tn.(map[string]any); ok {
					if _, has := tm[name]; has {
						tnets[i], replaced = em, true
						break
					}
				}
			}
			if !replaced {
				tnets = append(tnets, em)
			}
		}
		tmpl["networks_values"] = tnets
		extra["networks_values"] = []any{}
	}
	empty, known := rubyEmpty(extraRoles)
	switch {
	case !known:
		return uncaught(noMethod("empty?", extraRoles))
	case empty:
		return nil
	}
	list, ok := extraRoles.([]any)
	if !ok { // Hash#find yields [key, value] pairs; String has no find
		if isMap(extraRoles) {
			return uncaught(&rubyExc{"TypeError", "no implicit conversion of String into Integer"})
		}
		return uncaught(noMethod("find", extraRoles))
	}
	roles, _ := tmpl["roles"].([]any)
	for i, r := range roles {
		rm, _ := r.(map[string]any)
		for _, item := range list {
			name, exc := rubyIndex(item, "name")
			if exc != nil {
				return uncaught(exc)
			}
			if name != nil && name == rm["name"] {
				roles[i] = deepMerge7(rm, item.(map[string]any))
				break
			}
		}
	}
	delete(extra, "roles")
	return nil
}

// rubyEmpty is v.empty? for the types that have it.
func rubyEmpty(v any) (empty, known bool) {
	switch x := v.(type) {
	case []any:
		return len(x) == 0, true
	case map[string]any:
		return len(x) == 0, true
	case string:
		return x == "", true
	}
	return false, false
}

// firstKey is hash.keys.first; Go maps have no order, so the smallest key
// stands in (entries of networks_values have one key in practice).
func firstKey(m map[string]any) string {
	first := ""
	for k := range m {
		if first == "" || k < first {
			first = k
		}
	}
	return first
}

func isMap(v any) bool   { _, ok := v.(map[string]any); return ok }
func isSlice(v any) bool { _, ok := v.([]any); return ok }

// deepCopy copies a decoded JSON value (JSON.parse(x.to_json) in Ruby).
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = deepCopy(e)
		}
		return a
	}
	return v
}

// rubyString is "#{v}" for a JSON value.
func rubyString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return ""
	}
	return strings.TrimSpace(scalarString(v))
}
