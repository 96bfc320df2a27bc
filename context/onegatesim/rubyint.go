package onegatesim

import (
	"encoding/json"
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
