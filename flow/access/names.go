package access

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// freeName picks the name under which a merge writes the entry body into
// doc[key] (field "cluster" or "user") for the context named ctxName: the
// first of base, base-2, base-3, … that no context but ctxName refers to,
// or whose entry already holds exactly body. Writing there changes
// nothing any other context sees.
func freeName(doc map[string]any, key, field, base, ctxName string, body map[string]any) (string, error) {
	list, err := namedList(doc, key)
	if err != nil {
		return "", err
	}
	users, err := entryUsers(doc, field, ctxName)
	if err != nil {
		return "", err
	}
	want, _ := json.Marshal(map[string]any{"name": "", field: body})
	// Each name skipped is one another context refers to, so this ends.
	for n := 1; ; n++ {
		name := base
		if n > 1 {
			name = base + "-" + strconv.Itoa(n)
		}
		if !users[name] {
			return name, nil
		}
		// A name another context refers to but no entry holds is not
		// free either: writing it would give that context e's credential.
		entry := findNamed(list, name)
		if entry == nil {
			continue
		}
		// Compare as the merge would write it, the name aside.
		have := make(map[string]any, len(entry))
		for k, v := range entry {
			have[k] = v
		}
		have["name"] = ""
		if got, err := json.Marshal(have); err == nil && bytes.Equal(got, want) {
			return name, nil
		}
	}
}

// entryUsers is the set of cluster (or user) names that contexts other
// than ctxName refer to.
func entryUsers(doc map[string]any, field, ctxName string) (map[string]bool, error) {
	contexts, err := namedList(doc, "contexts")
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for _, c := range contexts {
		m := c.(map[string]any)
		if m["name"] == ctxName {
			continue
		}
		if refs, ok := m["context"].(map[string]any); ok {
			if s, ok := refs[field].(string); ok {
				used[s] = true
			}
		}
	}
	return used, nil
}

func findNamed(list []any, name string) map[string]any {
	for _, e := range list {
		if m := e.(map[string]any); m["name"] == name {
			return m
		}
	}
	return nil
}

// derivedName reports whether name is base or one freeName makes from it.
func derivedName(name, base string) bool {
	if name == base {
		return true
	}
	n, ok := strings.CutPrefix(name, base+"-")
	if !ok {
		return false
	}
	i, err := strconv.Atoi(n)
	return err == nil && i >= 2 && strconv.Itoa(i) == n
}
