package onegatesim

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// The servers are Ruby, and much of what they answer to odd input is what
// Ruby does with a parsed JSON value: x['key'] on a String, .to_i on nil, an
// exception nobody rescues. These helpers reproduce that for JSON values
// decoded with UseNumber. NoMethodError reads as Ruby 3.3 words it (Debian
// 13, AlmaLinux 10); Ruby 3.2 and older, on the other platforms the releases
// support, write "for nil:NilClass" or "for [1]:Array" instead, and 3.4
// quotes 'name'. No client should parse these bodies.

// rubyExc is a Ruby exception: its class and message.
type rubyExc struct{ class, msg string }

func (e *rubyExc) Error() string { return e.msg }

// rubyReceiver names a value the way NoMethodError does.
func rubyReceiver(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case bool:
		return fmt.Sprint(x)
	}
	return "an instance of " + rubyClass(v)
}

func rubyClass(v any) string {
	switch x := v.(type) {
	case nil:
		return "NilClass"
	case bool:
		if x {
			return "TrueClass"
		}
		return "FalseClass"
	case string:
		return "String"
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return "Float"
		}
		return "Integer"
	case int:
		return "Integer"
	case []any:
		return "Array"
	case map[string]any:
		return "Hash"
	}
	return fmt.Sprintf("%T", v)
}

func noMethod(method string, recv any) *rubyExc {
	return &rubyExc{"NoMethodError", fmt.Sprintf("undefined method `%s' for %s", method, rubyReceiver(recv))}
}

// rubyIndex is recv['key'] for a String key: a Hash looks it up, a String
// gives the key back if it contains it (String#[] with a String), an Array
// or Integer raises TypeError, anything else NoMethodError.
func rubyIndex(recv any, key string) (any, *rubyExc) {
	switch x := recv.(type) {
	case map[string]any:
		return x[key], nil
	case string:
		if strings.Contains(x, key) {
			return key, nil
		}
		return nil, nil
	case []any:
		return nil, &rubyExc{"TypeError", "no implicit conversion of String into Integer"}
	case json.Number, int:
		if rubyClass(x) == "Integer" {
			return nil, &rubyExc{"TypeError", "no implicit conversion of String into Integer"}
		}
	}
	return nil, noMethod("[]", recv)
}

// rubyToIValue is v.to_i as OneFlow's scale route applies it to the
// cardinality it is sent: nil is 0, strings go through String#to_i, floats
// are truncated; booleans, arrays and hashes have no to_i.
func rubyToIValue(v any) (int, *rubyExc) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case int:
		return x, nil
	case string:
		return rubyToI(x), nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i), nil
		}
		f, err := x.Float64()
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, &rubyExc{"FloatDomainError", x.String()}
		}
		return int(max(min(f, math.MaxInt64), math.MinInt64)), nil
	}
	return 0, noMethod("to_i", v)
}

// rubySplit is String#split with a literal separator: trailing empty fields
// are dropped, leading ones kept.
func rubySplit(s, sep string) []string {
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// rubyJSONParse is JSON.parse of a request body (the json gem 2.x accepts a
// scalar at the top level), with the messages of the json gem the releases
// pin (2.12 in 7.0 up to 2.20 in 7.4, 2.16 in 6.10.5;
// share/install_gems/*/Gemfile.lock): "unexpected token 'not' at line 1
// column 1" for a bad keyword, "unexpected character: ..." for another bad
// byte, "unexpected end of input at line L column C" when it runs out. The
// quoted fragment runs to the next blank, at most 32 bytes
// (build_parse_error_message in ext/json/ext/parser/parser.c).
func rubyJSONParse(b []byte) (any, *rubyExc) {
	x, err := decodeJSON(b)
	if err == nil {
		return x, nil
	}
	s := string(b)
	pos := len(s)
	var se *json.SyntaxError
	switch {
	case errors.Is(err, errTrailing):
		pos = len(strings.TrimRight(s, " \t\r\n"))
		for pos > 0 && !strings.ContainsRune(" \t\r\n}]", rune(s[pos-1])) {
			pos--
		}
		return nil, jsonError(s, pos, "unexpected token at end of stream ")
	case errors.As(err, &se) && int(se.Offset) <= len(s) && se.Offset > 0:
		// Go stops inside the token; Ruby quotes it from its start.
		pos = int(se.Offset) - 1
		for pos > 0 && isAlnum(s[pos-1]) {
			pos--
		}
	}
	if strings.TrimSpace(s[pos:]) == "" {
		return nil, jsonError(s, len(s), "unexpected end of input")
	}
	if strings.ContainsRune("ntfNI", rune(s[pos])) {
		return nil, jsonError(s, pos, "unexpected token ")
	}
	return nil, jsonError(s, pos, "unexpected character: ")
}

func jsonError(s string, pos int, what string) *rubyExc {
	msg := what
	if pos < len(s) {
		end := pos
		for end < len(s) && end-pos < 32 && !strings.ContainsRune(" \t\r\n\x00", rune(s[end])) {
			end++
		}
		msg += "'" + s[pos:end] + "'"
	}
	line := 1 + strings.Count(s[:pos], "\n")
	col := pos - strings.LastIndex(s[:pos], "\n")
	return &rubyExc{"JSON::ParserError", fmt.Sprintf("%s at line %d column %d", strings.TrimSpace(msg), line, col)}
}
