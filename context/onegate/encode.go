package onegate

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Update types of PUT /vm (reference §1.3).
const (
	updateMerge = "1"
	updateErase = "2"
)

// EncodeUpdate renders the body of PUT /vm or PUT /vms/:id for kvs, byte for
// byte what the official client sends for `onegate vm update --data`: the
// form fields data (one KEY="value" line per pair, joined by newlines) and
// type=1. Values are quoted already, which every server version accepts and
// which keeps escape_attr from re-quoting them.
func EncodeUpdate(kvs []KV) (string, error) {
	if len(kvs) == 0 {
		return "", fmt.Errorf("%w: no keys to update", ErrInvalid)
	}
	seen := make(map[string]bool, len(kvs))
	var b strings.Builder
	for i, kv := range kvs {
		if err := CheckKey(kv.Key); err != nil {
			return "", err
		}
		if seen[kv.Key] {
			// A repeated key would become a vector in USER_TEMPLATE.
			return "", fmt.Errorf("%w: key %s given twice", ErrInvalid, kv.Key)
		}
		seen[kv.Key] = true
		if err := CheckValue(kv.Key, kv.Value); err != nil {
			return "", err
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(kv.Key)
		b.WriteString(`="`)
		b.WriteString(kv.Value)
		b.WriteByte('"')
	}
	return url.Values{"data": {b.String()}, "type": {updateMerge}}.Encode(), nil
}

// EncodeErase renders the body that deletes key from USER_TEMPLATE (type=2).
func EncodeErase(key string) (string, error) {
	if err := CheckKey(key); err != nil {
		return "", err
	}
	return url.Values{"data": {key}, "type": {updateErase}}.Encode(), nil
}

// CheckKey accepts a USER_TEMPLATE attribute name: letters, digits and
// underscores, not starting with a digit.
func CheckKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalid)
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		// %q of a key is safe: keys are names, never secrets.
		return fmt.Errorf("%w: key %q is not a template attribute name", ErrInvalid, key)
	}
	return nil
}

// CheckValue refuses a value the server side would corrupt: a quote,
// comma, bracket or backslash breaks escape_attr or oned's template parser,
// a newline splits the line, and other control bytes or invalid UTF-8 have
// no defined meaning there. The error names the key and the offending
// character class, never the value (it may be a token). Callers with such
// data encode it first, e.g. as base64.
func CheckValue(key, value string) error {
	if !utf8.ValidString(value) {
		return fmt.Errorf("%w: value of %s is not valid UTF-8", ErrInvalid, key)
	}
	for _, r := range value {
		switch {
		case r == '"' || r == ',' || r == '[' || r == ']' || r == '\\':
			return fmt.Errorf("%w: value of %s contains %s, which OneGate cannot store; encode it (base64)", ErrInvalid, key, strconv.QuoteRune(r))
		case r == '\n':
			return fmt.Errorf("%w: value of %s contains a newline; encode it (base64)", ErrInvalid, key)
		case r < 0x20 || r == 0x7f:
			return fmt.Errorf("%w: value of %s contains a control character; encode it (base64)", ErrInvalid, key)
		}
	}
	return nil
}
