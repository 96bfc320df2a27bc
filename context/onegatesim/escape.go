package onegatesim

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// errInvalidUTF8 is what Ruby raises when String#split meets bad UTF-8.
var errInvalidUTF8 = errors.New("invalid byte sequence in UTF-8")

// escapeAttr reproduces the OneGate server's escape_attr (5.12+), which
// quotes KEY=value lines before oned parses them. It works character by
// character and looks only one character back or ahead, so it is easy to
// break: "A=x,y" becomes `A="x",y"` and "A=" becomes `A="`, both parse
// errors. eqOnce is the 6.0 fix that stops quoting a second '=' in a value
// (on 5.12 "A=a=b" became `A="a="b"`).
//
// Quirks kept on purpose: Ruby's attr[-1] makes the first character look
// back at the last one, and a literal backslash-n turns into a newline only
// after the quoting, so `K=a\nB=c` becomes two lines.
func escapeAttr(in string, eqOnce bool) (string, error) {
	if !utf8.ValidString(in) {
		return "", errInvalidUTF8
	}
	rs := []rune(in)
	at := func(i int) rune { // Ruby array indexing: -1 is the last, past the end is nil
		if i < 0 {
			i += len(rs)
		}
		if i < 0 || i >= len(rs) {
			return 0
		}
		return rs[i]
	}
	var b strings.Builder
	escaping := false
	for i, s := range rs {
		prev, next := at(i-1), at(i+1)
		switch {
		case s == '=' && escaping && eqOnce:
			b.WriteRune(s)
		case s == '=' && next != '[' && next != '"':
			b.WriteString(`="`)
			escaping = true
		case s == ',' && prev != '"':
			b.WriteString(`",`)
		case s == '[' && prev != '=' && prev != '"':
			b.WriteString(`"[`)
		case s == ']' && prev != '=' && prev != '"':
			b.WriteString(`"]`)
			escaping = false
		case s == '\\' && prev != '"':
			b.WriteString(`"\`)
			escaping = false
		case s == '\n' && prev != '"':
			b.WriteString("\"\n")
			escaping = false
		default:
			b.WriteRune(s)
		}
	}
	out := strings.ReplaceAll(b.String(), `\n`, "\n")
	if escaping && !strings.HasSuffix(out, "]") && !strings.HasSuffix(out, `"`) {
		out += `"`
	}
	return out, nil
}
