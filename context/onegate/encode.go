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

// EncodeUpdate renders the body of PUT /vm or PUT /vms/:id for kvs: the form
// fields data (one line per pair, joined by newlines) and type=1, as the
// official client sends for `onegate vm update --data`. Each value is
// checked first (CheckValue); nothing is encoded if one is refused.
//
// The form of each line is chosen by its value, because the server rewrites
// the text with escape_attr (onegate-server.rb, 5.12+) before oned parses it
// (src/parsers/template_parser.l):
//
//   - no '=' in the value: KEY="value". oned reads it as is on every
//     release, and escape_attr leaves an '=' followed by '"' alone.
//   - an '=' in the value: KEY=value, unquoted. From 6.0 escape_attr quotes
//     it up to the end of the line and keeps every later '=' inside, so it
//     reads back unchanged. Pre-quoting would break it there: the inner '='
//     is followed by neither '"' nor '[', so escape_attr opens a second
//     quote and oned answers 500 Parse error.
//
// No form carries an '=' to older servers. On 5.12 escape_attr opens a
// quote at every '=', and on 5.10 and older oned's lexer ends an unquoted
// value at '=': depending on the rest of the value the update fails with
// 500 Parse error or stores a cut value (sometimes with stray attributes
// made of its tail). The client cannot tell the release, so callers that
// must reach those servers keep '=' out of the value, or read the value
// back (the agent's failure report does).
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
		b.WriteByte('=')
		if strings.Contains(kv.Value, "=") {
			b.WriteString(kv.Value)
		} else {
			b.WriteByte('"')
			b.WriteString(kv.Value)
			b.WriteByte('"')
		}
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

// CheckKey accepts a USER_TEMPLATE attribute name that oned stores as
// given: upper-case letters, digits and underscores, starting with a
// letter. oned upper-cases names and prefixes "ATT" to names that do not
// start with a letter or start with "XML" (its Attribute constructor), so
// those would not read back as sent.
func CheckKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalid)
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= 'A' && c <= 'Z' || i > 0 && (c == '_' || c >= '0' && c <= '9') {
			continue
		}
		// %q of a key is safe: keys are names, never secrets.
		return fmt.Errorf("%w: key %q is not an upper-case template attribute name", ErrInvalid, key)
	}
	if strings.HasPrefix(key, "XML") {
		return fmt.Errorf("%w: key %q starts with XML, which oned renames", ErrInvalid, key)
	}
	return nil
}

// CheckValue refuses a value no form of EncodeUpdate carries through
// escape_attr and oned's parser unchanged: a quote, comma, bracket or
// backslash (escape_attr inserts a quote before each, or oned's lexer reads
// it as syntax), a line break (it ends the line), other control bytes,
// invalid UTF-8 (Ruby's split raises), and the empty value (escape_attr
// turns KEY= into KEY=", which stores a lone quote). Erase a key instead of
// emptying it. The error names the key and the character class, never the
// value (it may be a token). Callers with such data encode it first, e.g.
// as base64 (whose '=' padding needs 6.0+, see EncodeUpdate).
func CheckValue(key, value string) error {
	if value == "" {
		return fmt.Errorf("%w: value of %s is empty; erase the key instead", ErrInvalid, key)
	}
	if !utf8.ValidString(value) {
		return fmt.Errorf("%w: value of %s is not valid UTF-8", ErrInvalid, key)
	}
	for _, r := range value {
		switch {
		case r == '"' || r == ',' || r == '[' || r == ']' || r == '\\':
			return fmt.Errorf("%w: value of %s contains %s, which OneGate cannot store; encode it (base64)", ErrInvalid, key, strconv.QuoteRune(r))
		case r == '\n' || r == '\r':
			return fmt.Errorf("%w: value of %s contains a line break; encode it (base64)", ErrInvalid, key)
		case r < 0x20 || r == 0x7f:
			return fmt.Errorf("%w: value of %s contains a control character; encode it (base64)", ErrInvalid, key)
		}
	}
	return nil
}
