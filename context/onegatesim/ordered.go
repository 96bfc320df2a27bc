package onegatesim

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// obj is a JSON object that keeps its key order. The OneGate server builds
// Ruby hashes, which serialise in insertion order; keeping that order makes
// responses byte-comparable with the reference's examples.
type obj []field

type field struct {
	k string
	v any
}

func (o obj) MarshalJSON() ([]byte, error) { return appendJSON(nil, o) }

// marshal encodes like Ruby's to_json: no HTML escaping of <, > and &.
func marshal(v any) ([]byte, error) { return appendJSON(make([]byte, 0, 512), v) }

// appendJSON writes the few types responses are built from directly, which
// avoids encoding/json's re-validation of nested Marshalers.
func appendJSON(b []byte, v any) ([]byte, error) {
	var err error
	switch x := v.(type) {
	case obj:
		b = append(b, '{')
		for i, f := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, f.k)
			b = append(b, ':')
			if b, err = appendJSON(b, f.v); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case string:
		return appendString(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case nil:
		return append(b, "null"...), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...), nil
}

// appendString quotes s as Ruby's JSON generator does: ", \ and control
// characters escaped, everything else (HTML characters, non-ASCII) as is;
// invalid UTF-8 becomes U+FFFD like encoding/json.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x80 {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+n]...)
			}
			i += n
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"')
}
