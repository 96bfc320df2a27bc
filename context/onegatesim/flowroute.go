package onegatesim

import (
	"fmt"
	"strings"
)

// The checks the instantiate route (oneflow-server.rb, POST
// /service_template/:id/action, "instantiate") makes before it merges:
// inputs against the merge document only (values stored in the template do
// not count), then networks. Each failure is a 400 (VALIDATION_EC), except
// exceptions raised outside its begin/rescue blocks.

// routeChecks6 is release-6.10.5's: custom_attrs and custom_attrs_values,
// no renaming. A template input whose role the merge document does not name
// raises NoMethodError on nil, which the route rescues into a 400.
func routeChecks6(body, m map[string]any) error {
	if err := checkInputs(body["custom_attrs"], m["custom_attrs_values"], false); err != nil {
		return err
	}
	roles, _ := body["roles"].([]any)
	for _, r := range roles {
		role := r.(map[string]any)
		if role["custom_attrs"] == nil {
			continue
		}
		list, err := mergeRoles(m, role, "custom attributes", "The role custom attributes are empty or do not have a valid format")
		if err != nil {
			return err
		}
		mr, err := findRole(list, role["name"])
		if err != nil {
			return err
		}
		if mr == nil {
			return refused(400, "%s", noMethod("[]", nil).msg)
		}
		if err := checkInputs(role["custom_attrs"], mr["custom_attrs_values"], false); err != nil {
			return err
		}
	}
	return nil
}

// routeChecks7 is release-7.4.0's: custom_attrs_values renamed first (top
// level and in the merge's roles), template_contents must be a hash, and a
// role the merge document does not name is skipped.
func routeChecks7(body, m map[string]any) error {
	renameValues(m)
	if err := checkInputs(body["user_inputs"], m["user_inputs_values"], true); err != nil {
		return err
	}
	roles, _ := body["roles"].([]any)
	for _, r := range roles {
		role := r.(map[string]any)
		if tc, has := role["template_contents"]; has && !isMap(tc) {
			// The two literals of the real message join without a space.
			return refused(400, "Error validating template_contents object for therole %s. The object must be a valid hash.", rubyString(role["name"]))
		}
		if role["user_inputs"] == nil {
			continue
		}
		list, err := mergeRoles(m, role, "user inputs", "The role user inputs are empty or do not have a valid format")
		if err != nil {
			return err
		}
		mr, err := findRole(list, role["name"])
		if err != nil {
			return err
		}
		if mr == nil {
			continue
		}
		renameValues(mr)
		if err := checkInputs(role["user_inputs"], mr["user_inputs_values"], true); err != nil {
			return err
		}
	}
	return nil
}

func renameValues(m map[string]any) {
	if v, ok := m["custom_attrs_values"]; ok {
		m["user_inputs_values"] = v
		delete(m, "custom_attrs_values")
	}
}

// mergeRoles is the merge document's roles, required once a template role
// declares inputs.
func mergeRoles(m, role map[string]any, what, badFormat string) ([]any, error) {
	mr := m["roles"]
	if mr == nil {
		return nil, missingInputs(fmt.Sprintf("The Service template specifies %s for the role %s but no values have been found", what, rubyString(role["name"])))
	}
	list, ok := mr.([]any)
	if !ok || len(list) == 0 {
		return nil, refused(400, "%s", badFormat)
	}
	return list, nil
}

// networkDefaults is the route's networks step (the same in 6.10.5 and
// 7.4.0). Without networks_values in the merge document it builds them from
// field 5 of each networks string ("M|network|desc||id:0" gives
// {"id":"0"}); "id:" gives a null id, and deployment later fails on it.
// Then every declared network needs a value, and \" is removed from the
// values' strings.
func networkDefaults(body, m map[string]any) error {
	nets := body["networks"]
	nv := m["networks_values"]
	if truthy(nets) && !truthy(nv) {
		list, err := defaultNetworkValues(nets)
		if err != nil {
			return err
		}
		nv = list
		m["networks_values"] = list
	}
	if truthy(nets) && !isMap(nets) {
		return refused(400, "Wrong networks format")
	}
	if truthy(nv) {
		list, ok := nv.([]any)
		if !ok {
			if isMap(nv) { // Hash#find yields [key, value] pairs: never a Hash
				return refused(400, "Wrong networks_values format")
			}
			return uncaught(noMethod("find", nv))
		}
		for _, e := range list {
			if !isMap(e) {
				return refused(400, "Wrong networks_values format")
			}
		}
	}
	if truthy(nets) && !truthy(nv) {
		return refused(400, "Missing networks_values")
	}
	if truthy(nets) && truthy(nv) {
		given := map[string]bool{}
		for _, e := range nv.([]any) {
			for k := range e.(map[string]any) {
				given[k] = true
			}
		}
		for k := range nets.(map[string]any) {
			if !given[k] {
				return refused(400, "Every network key must have its value defined at networks_value")
			}
		}
	}
	if list, ok := nv.([]any); ok {
		for _, e := range list {
			for _, val := range e.(map[string]any) {
				switch x := val.(type) {
				case map[string]any:
					for k, s := range x {
						if str, ok := s.(string); ok {
							x[k] = strings.ReplaceAll(str, `\"`, "")
						}
					}
				case []any: // Array#map runs; nothing is a pair of strings to clean
				default:
					return uncaught(noMethod("map", val))
				}
			}
		}
	}
	return nil
}

// defaultNetworkValues is value.split('|')[4].strip.split(':') per network.
// Anything that makes Ruby raise there is "Wrong networks format".
func defaultNetworkValues(nets any) ([]any, error) {
	nm, ok := nets.(map[string]any)
	if !ok {
		return nil, refused(400, "Wrong networks format")
	}
	var out []any
	for _, key := range sortedKeys(nm) {
		s, ok := nm[key].(string)
		fields := rubySplit(s, "|")
		if !ok || len(fields) < 5 {
			return nil, refused(400, "Wrong networks format")
		}
		kv := rubySplit(strings.TrimSpace(fields[4]), ":")
		val := map[string]any{}
		switch len(kv) {
		case 0: // net[key][nil] = nil: no usable key
		case 1:
			val[kv[0]] = nil
		default:
			val[kv[0]] = kv[1]
		}
		out = append(out, map[string]any{key: val})
	}
	return out, nil
}
