package onegatesim

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// rubyToI is Ruby's String#to_i: leading blanks, a sign, digits (single
// underscores between them allowed), anything after ignored, 0 if none.
// The OneGate server reads VM IDs and the PUT type with it.
func rubyToI(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' && i > 0 && i+1 < len(s) && isDigit(s[i-1]) && isDigit(s[i+1]) {
			continue
		}
		if !isDigit(c) {
			break
		}
		if n > (math.MaxInt-9)/10 {
			break // saturate rather than wrap
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// rubyInteger is Kernel#Integer as OneFlow's validator applies it to
// "integer" fields: JSON integers, floats (truncated) and numeric strings
// ("3", " 3 ", "0x1A") pass; anything else is an error. null means absent.
func rubyInteger(v any) (n int, present bool, err error) {
	switch x := v.(type) {
	case nil:
		return 0, false, nil
	case int:
		return x, true, nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i), true, nil
		}
		f, err := x.Float64()
		if err != nil {
			return 0, true, fmt.Errorf("%q is not an integer", x)
		}
		return int(f), true, nil
	case string:
		s := strings.ReplaceAll(strings.TrimSpace(x), "_", "")
		i, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return 0, true, fmt.Errorf("%q is not an integer", x)
		}
		return int(i), true, nil
	case bool:
		if !x {
			return 0, false, nil // the validator treats false as absent
		}
	}
	return 0, true, fmt.Errorf("%v is not an integer", v)
}

// scalarString renders a JSON scalar as Ruby's to_s would in a template.
func scalarString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}
