package flow

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	yaml2 "go.yaml.in/yaml/v2"
)

// yamlNumbers is a spec document as the YAML reader sees it, keeping the
// source text of every scalar it reads as a number: by the time the JSON
// decoder sees 010 it is 8, and 1e-300 a float like any other. It uses the
// reader sigs.k8s.io/yaml itself uses, so it resolves exactly the same
// scalars as numbers.
type yamlNumbers struct {
	fields map[any]*yamlNumbers
	items  []*yamlNumbers
	number string // the source text of a scalar read as a number
}

// UnmarshalYAML tries a mapping, then a sequence, then a scalar: a node of
// the wrong kind fails at once, without decoding its children.
func (n *yamlNumbers) UnmarshalYAML(unmarshal func(any) error) error {
	if unmarshal(&n.fields) == nil {
		return nil
	}
	if unmarshal(&n.items) == nil {
		return nil
	}
	var v any
	if err := unmarshal(&v); err != nil {
		return err
	}
	switch v.(type) {
	case int, int64, uint64, float64:
		return unmarshal(&n.number) // a string target gets the source text
	}
	return nil
}

// checkSpecNumbers refuses, by path, every number in the spec's (first)
// YAML document that is not written in decimal (checkDecimal). A document
// the YAML reader cannot read passes: ParseSpec reports that itself.
func checkSpecNumbers(data []byte) error {
	var root yamlNumbers
	if err := yaml2.NewDecoder(bytes.NewReader(data)).Decode(&root); err != nil {
		return nil
	}
	var bad []string
	root.walk("", &bad)
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrSpec, strings.Join(bad, "; "))
}

func (n *yamlNumbers) walk(path string, bad *[]string) {
	if n == nil {
		return
	}
	if n.number != "" {
		if err := checkDecimal(n.number, true); err != nil {
			*bad = append(*bad, fmt.Sprintf("%s: %.40s: %v", path, n.number, err))
		}
		return
	}
	keys := make([]string, 0, len(n.fields))
	byName := make(map[string]*yamlNumbers, len(n.fields))
	for k, v := range n.fields {
		name := fmt.Sprint(k)
		keys = append(keys, name)
		byName[name] = v
	}
	slices.Sort(keys)
	for _, k := range keys {
		byName[k].walk(joinPath(path, k), bad)
	}
	for i, v := range n.items {
		v.walk(fmt.Sprintf("%s[%d]", path, i), bad)
	}
}
