package flow

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// jnode is a value of the document being validated, with its JSON path.
// Values come from encoding/json with UseNumber: map[string]any, []any,
// json.Number, string, bool, nil.
type jnode struct {
	v    any
	path string
}

// get returns obj[key]. Like the server, a null or false value counts as
// absent ("if body_value" in validator.rb).
func (n jnode) get(key string) (jnode, bool) {
	obj, _ := n.v.(map[string]any)
	v, ok := obj[key]
	if !ok || v == nil || v == false {
		return jnode{}, false
	}
	return jnode{v, childPath(n.path, key)}, true
}

// childPath appends key to a JSON path: .key for a plain name, else
// ["key"] quoted, so a key holding dots, quotes or newlines cannot make a
// problem line ambiguous or span lines.
func childPath(path, key string) string {
	if rubyWord.MatchString(key) {
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

func (n jnode) has(key string) bool { _, ok := n.get(key); return ok }

// hasKey reports whether obj has key at all, null or false included (Ruby's
// Hash#key?, which old_format? uses).
func (n jnode) hasKey(key string) bool {
	obj, _ := n.v.(map[string]any)
	_, ok := obj[key]
	return ok
}

func (n jnode) index(i int) jnode {
	return jnode{n.v.([]any)[i], fmt.Sprintf("%s[%d]", n.path, i)}
}

func (n jnode) str() (string, bool)         { s, ok := n.v.(string); return s, ok }
func (n jnode) obj() (map[string]any, bool) { o, ok := n.v.(map[string]any); return o, ok }
func (n jnode) arr() ([]any, bool)          { a, ok := n.v.([]any); return a, ok }
func (n jnode) keys() []string {
	o, _ := n.obj()
	ks := make([]string, 0, len(o))
	for k := range o {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func typeName(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// checker holds the findings of one Validate run.
type checker struct {
	ps problems
	// convert6: the document is 6.x and the server 7.x, which converts it
	// first (Validate's model).
	convert6 bool
}

// required reports a missing mandatory key the way the server words it.
func (c *checker) required(n jnode, key, what string) (jnode, bool) {
	v, ok := n.get(key)
	if !ok {
		c.ps.errorf(childPath(n.path, key), "missing: %s is mandatory", what)
	}
	return v, ok
}

func (c *checker) wantString(n jnode, key string, enum ...string) (string, bool) {
	v, ok := n.get(key)
	if !ok {
		return "", false
	}
	s, isStr := v.str()
	if !isStr {
		c.ps.errorf(v.path, "want a string, got %s", typeName(v.v))
		return "", false
	}
	if len(enum) > 0 && !slices.Contains(enum, s) {
		c.ps.errorf(v.path, "%q: want one of %s", s, strings.Join(enum, ", "))
		return s, false
	}
	return s, true
}

func (c *checker) wantBool(n jnode, key string) {
	if v, ok := n.get(key); ok {
		if _, isBool := v.v.(bool); !isBool {
			c.ps.errorf(v.path, "want true or false, got %s", typeName(v.v))
		}
	}
}

func (c *checker) wantObject(n jnode, key string) (jnode, bool) {
	v, ok := n.get(key)
	if !ok {
		return v, false
	}
	if _, isObj := v.obj(); !isObj {
		c.ps.errorf(v.path, "want an object, got %s", typeName(v.v))
		return v, false
	}
	return v, true
}

func (c *checker) wantArray(n jnode, key string) (jnode, bool) {
	v, ok := n.get(key)
	if !ok {
		return v, false
	}
	if _, isArr := v.arr(); !isArr {
		c.ps.errorf(v.path, "want an array, got %s", typeName(v.v))
		return v, false
	}
	return v, true
}

// wantInt checks an integer the way the server's Integer(v) does: JSON
// integers pass; floats and numeric strings pass too but are rewritten,
// which is worth a warning; anything else is an error. minimum < 0 means
// no lower bound.
func (c *checker) wantInt(n jnode, key string, minimum int64) (int64, bool) {
	v, ok := n.get(key)
	if !ok {
		return 0, false
	}
	i, ok := c.asInt(v)
	if ok && minimum >= 0 && i < minimum {
		c.ps.errorf(v.path, "%d: want %d or more", i, minimum)
		return i, false
	}
	return i, ok
}

func (c *checker) asInt(v jnode) (int64, bool) {
	switch x := v.v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i, true
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil || f >= math.MaxInt64 || f <= math.MinInt64 {
			c.ps.errorf(v.path, "%s is not an integer OpenNebula can hold", x)
			return 0, false
		}
		c.ps.warnf(v.path, "%s is not an integer: the server truncates it to %d", x, int64(f))
		return int64(f), true
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(x), 0, 64)
		if err != nil {
			c.ps.errorf(v.path, "%q is not an integer", x)
			return 0, false
		}
		c.ps.warnf(v.path, "%q is a string: the server converts it to the integer %d", x, i)
		return i, true
	case bool:
		c.ps.errorf(v.path, "true is not an integer (the server fails with HTTP 500)")
	default:
		c.ps.errorf(v.path, "want an integer, got %s", typeName(v.v))
	}
	return 0, false
}
