package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	yaml2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
)

// ParseSpec reads a cluster spec (YAML or JSON), strictly: unknown fields and
// duplicate keys are errors naming their path. It is the one entry point for
// every apiVersion; older versions will be upgraded here. Defaults are
// applied; CheckSpec (and the renderers) judge the values.
func ParseSpec(data []byte) (Spec, error) {
	if len(data) > MaxSpecSize {
		return Spec{}, fmt.Errorf("%w: %d bytes: a spec file has at most %d", ErrSpec, len(data), MaxSpecSize)
	}
	if err := checkSpecNumbers(data); err != nil {
		return Spec{}, err
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return Spec{}, fmt.Errorf("%w: %v", ErrSpec, err)
	}
	if err := singleDocument(data); err != nil {
		return Spec{}, fmt.Errorf("%w: %v", ErrSpec, err)
	}
	var raw any
	if err := json.Unmarshal(js, &raw); err != nil {
		return Spec{}, fmt.Errorf("%w: %v", ErrSpec, err)
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		if raw == nil {
			return Spec{}, fmt.Errorf("%w: the document is empty", ErrSpec)
		}
		return Spec{}, fmt.Errorf("%w: the document is not a mapping", ErrSpec)
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	switch {
	case apiVersion == "":
		return Spec{}, fmt.Errorf("%w: apiVersion is missing (want %s)", ErrSpec, APIVersion)
	case apiVersion != APIVersion:
		return Spec{}, fmt.Errorf("%w: apiVersion %q is not supported (want %s)", ErrSpec, apiVersion, APIVersion)
	case kind != Kind:
		return Spec{}, fmt.Errorf("%w: kind %q: want %s", ErrSpec, kind, Kind)
	}
	if unknown := unknownFields(reflect.TypeFor[Spec](), raw, ""); len(unknown) > 0 {
		return Spec{}, fmt.Errorf("%w: unknown field %s", ErrSpec, strings.Join(unknown, ", unknown field "))
	}
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return Spec{}, fmt.Errorf("%w: %s: got %s, want %s", ErrSpec, te.Field, te.Value, jsonKind(te.Type))
		}
		return Spec{}, fmt.Errorf("%w: %v", ErrSpec, err)
	}
	applyDefaults(&s)
	return s, nil
}

// singleDocument refuses a YAML stream with more than one document: the
// YAML reader above reads only the first and would silently drop the rest.
// Empty documents after the first (a trailing ---) are fine.
func singleDocument(data []byte) error {
	dec := yaml2.NewDecoder(bytes.NewReader(data))
	for n := 1; ; n++ {
		var v any
		err := dec.Decode(&v)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return fmt.Errorf("YAML document %d: %v", n, err)
		case n > 1 && v != nil:
			return fmt.Errorf("the file holds more than one YAML document (document %d starts after a ---): one cluster spec per file", n)
		}
	}
}

// unknownFields walks a decoded JSON value against the Go type it will be
// decoded into and returns the paths of keys the type does not have.
func unknownFields(t reflect.Type, v any, path string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil // a type mismatch; the decoder reports it
		}
		fields := map[string]reflect.Type{}
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" {
				fields[name] = f.Type
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := joinPath(path, k)
			ft, ok := fields[k]
			if !ok {
				out = append(out, p)
				continue
			}
			out = append(out, unknownFields(ft, obj[k], p)...)
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return nil
		}
		for i, e := range arr {
			out = append(out, unknownFields(t.Elem(), e, fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return out
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "a mapping"
	}
	return t.String()
}

// MarshalSpec writes a spec as YAML, e.g. to start a spec file from
// DefaultSpec.
func MarshalSpec(s Spec) ([]byte, error) { return yaml.Marshal(s) }
