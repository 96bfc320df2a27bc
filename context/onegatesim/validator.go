package onegatesim

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// OneFlow checks every service template with its own Validator
// (src/oca/ruby/opennebula/flow/validator.rb, Validator#validate! and the
// validate_* helpers), not a JSON Schema library. This is that validator, in
// the two dialects the simulated releases speak (messages differ between
// 6.10.5 and 7.4.0). Its rules, which a JSON Schema would not give:
//   - null and false count as absent: a required key fails, an optional one
//     is skipped unchecked (validate_object: "if body_value");
//   - a truthy default is stored when the key is absent (0 and "" are truthy
//     in Ruby), so "cardinality": null becomes 0;
//   - "integer" is Kernel#Integer: "3", " 3 ", "0x1A" and 2.7 pass and are
//     stored as integers; true, arrays and objects raise TypeError, which no
//     caller rescues (an HTTP 500);
//   - extra keys are allowed and never looked at;
//   - a string is checked against its enum or else its regex, and the regex
//     is Ruby's, whose ^ and $ anchor lines.

// vschema is one node of a validator schema.
type vschema struct {
	typ      string // object, array, string, integer, boolean
	required bool
	def      any      // stored when absent (nil: no default)
	enum     []string // string values allowed
	regex    string   // Ruby source of the regex, as inspect prints it
	re       *regexp.Regexp
	min      *int
	props    []vprop  // object keys, in the schema's order
	items    *vschema // array items; nil: not inspected
}

type vprop struct {
	key string
	s   *vschema
}

// validationError is Validator::ParseException (rescued by the routes).
type validationError struct{ msg string }

func (e *validationError) Error() string { return e.msg }

// rubyTypeError is the TypeError Kernel#Integer raises, which no route
// rescues: OneFlow answers 500.
type rubyTypeError struct{ msg string }

func (e *rubyTypeError) Error() string { return e.msg }

// validate checks body against s and rewrites it in place (coerced
// integers, defaults), as validate! does. flow7 picks 7.x's messages.
func validate(body any, s *vschema, key string, flow7 bool) (any, error) {
	switch s.typ {
	case "object":
		return validateObject(body, s, key, flow7)
	case "array":
		arr, ok := body.([]any)
		if !ok {
			return nil, &validationError{fmt.Sprintf("KEY: '%s' must be an Array;", key)}
		}
		if s.items == nil {
			return arr, nil
		}
		for i, it := range arr {
			v, err := validate(it, s.items, key, flow7)
			if err != nil {
				return nil, err
			}
			arr[i] = v
		}
		return arr, nil
	case "string":
		str, ok := body.(string)
		if !ok {
			return nil, &validationError{fmt.Sprintf("KEY: '%s' must be a String;", key)}
		}
		switch {
		case s.enum != nil:
			for _, e := range s.enum {
				if e == str {
					return str, nil
				}
			}
			return nil, &validationError{fmt.Sprintf("KEY: '%s' must be one of %s;", key, strings.Join(s.enum, ", "))}
		case s.re != nil && !s.re.MatchString(str):
			return nil, &validationError{fmt.Sprintf("KEY: '%s' must match regexp %s;", key, s.regex)}
		}
		return str, nil
	case "integer":
		n, err := kernelInteger(body)
		if err != nil {
			if te, ok := err.(*rubyTypeError); ok {
				return nil, te
			}
			return nil, &validationError{fmt.Sprintf("KEY: '%s' must be an Integer;", key)}
		}
		if s.min != nil && n < *s.min {
			return nil, &validationError{fmt.Sprintf("KEY: '%s' must be greater than or equal to %d;", key, *s.min)}
		}
		return n, nil
	case "boolean":
		if _, ok := body.(bool); !ok {
			if flow7 {
				return nil, &validationError{fmt.Sprintf("KEY: '%s' is not allowed in {:type=>:boolean, :required=>false};", key)}
			}
			return nil, &validationError{fmt.Sprintf("KEY: '%s' is not allowed;", key)}
		}
		return body, nil
	}
	return nil, fmt.Errorf("schema type %q is not a valid type", s.typ)
}

func validateObject(body any, s *vschema, key string, flow7 bool) (any, error) {
	m, ok := body.(map[string]any)
	if !ok {
		if flow7 {
			return nil, &validationError{fmt.Sprintf("KEY: '%s' must be an Object;", key)}
		}
		return nil, &validationError{fmt.Sprintf("KEY: %s must be a Hash; SCHEMA:", key)}
	}
	for _, p := range s.props {
		if v := m[p.key]; truthy(v) {
			nv, err := validate(v, p.s, p.key, flow7)
			if err != nil {
				return nil, err
			}
			m[p.key] = nv
			continue
		}
		if p.s.required {
			if flow7 {
				// The real message ends with JSON.dump of the object, in its
				// own key order; sorted keys here.
				return nil, &validationError{fmt.Sprintf("Mandatory document key '%s (%s)' is missing from %s", p.key, p.s.typ, dumpSorted(m))}
			}
			return nil, &validationError{fmt.Sprintf("KEY: '%s' is required;", p.key)}
		}
		if p.s.def != nil {
			m[p.key] = p.s.def
		}
	}
	return m, nil
}

// truthy is Ruby's truthiness for JSON values: only null and false are not.
func truthy(v any) bool {
	b, isBool := v.(bool)
	return v != nil && (!isBool || b)
}

// kernelInteger is Kernel#Integer on a JSON value: integers, floats
// (truncated) and numeric strings pass ("3", " 3 ", "0x1A", "0b11", "017"
// is octal, "3_000"); other strings are an ArgumentError; true, arrays and
// objects a TypeError.
func kernelInteger(v any) (int, error) {
	switch x := v.(type) {
	case int:
		return x, nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i), nil
		}
		f, err := x.Float64()
		switch {
		case err != nil || math.IsInf(f, 0) || math.IsNaN(f):
			return 0, &rubyTypeError{"FloatDomainError: " + x.String()}
		case f >= math.MaxInt64: // a Bignum in Ruby; saturated here
			return math.MaxInt, nil
		case f <= math.MinInt64:
			return math.MinInt, nil
		}
		return int(f), nil
	case string:
		s := strings.TrimSpace(x)
		if strings.Contains(s, "__") || strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") {
			return 0, fmt.Errorf("invalid value for Integer(): %q", x)
		}
		i, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return 0, fmt.Errorf("invalid value for Integer(): %q", x)
		}
		return int(i), nil
	case bool:
		return 0, &rubyTypeError{fmt.Sprintf("can't convert %t into Integer", x)}
	case []any:
		return 0, &rubyTypeError{"can't convert Array into Integer"}
	case map[string]any:
		return 0, &rubyTypeError{"can't convert Hash into Integer"}
	}
	return 0, &rubyTypeError{fmt.Sprintf("can't convert %T into Integer", v)}
}

// dumpSorted renders a JSON object compactly with sorted keys.
func dumpSorted(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(m[k])
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.String()
}
