package context

import (
	"sort"
	"strings"
)

// Vars are context variables by name, as context.sh or one_env define them.
type Vars map[string]string

// Get returns the value of key with surrounding whitespace removed; a
// missing key reads as "".
func (v Vars) Get(key string) string { return strings.TrimSpace(v[key]) }

// Lookup returns the raw value of key and whether it is set.
func (v Vars) Lookup(key string) (string, bool) {
	s, ok := v[key]
	return s, ok
}

// Keys returns the variable names in byte order, as OpenNebula writes them.
func (v Vars) Keys() []string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
