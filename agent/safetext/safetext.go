// Package safetext makes a value that came from outside this program
// (another VM's published data, a template, an answer of OneGate or the
// API server) safe to put in a log line, an error, a file or a OneGate
// value: bounded, on one line, printable, and unambiguous. It imports only
// the standard library, so both onekube-agent and onekubed may use it.
package safetext

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Max is the bound of Value and Quoted: longer than any address, name or
// key this project publishes, far shorter than a line.
const Max = 200

// Sanitize returns s escaped as in a Go string literal, without the quotes:
// a backslash doubles, control characters (\n, \r, \t, ESC, ...) and other
// unprintable runes (bidirectional overrides, U+2028, ...) take their
// escapes, and a byte that is not UTF-8 becomes \xNN; printable text,
// double quotes included, is kept as is. The escaped text is cut, on an
// escape's boundary, at limit bytes; a cut is marked "…(+N bytes)", N being
// the bytes of s left out, so the result is at most limit+MarkLen bytes.
func Sanitize(s string, limit int) string {
	limit = max(limit, 0)
	b, _ := appendEscaped(make([]byte, 0, min(len(s), limit)+8), s, limit, false)
	return string(b)
}

// Value is Sanitize bounded by Max.
func Value(s string) string { return Sanitize(s, Max) }

// Quote is Sanitize in double quotes, with the double quotes inside
// escaped too: without a cut, strconv.Unquote gives s back.
func Quote(s string, limit int) string {
	limit = max(limit, 0)
	b := append(make([]byte, 0, min(len(s), limit)+10), '"')
	b, _ = appendEscaped(b, s, limit, true)
	return string(append(b, '"'))
}

// Quoted is Quote bounded by Max.
func Quoted(s string) string { return Quote(s, Max) }

// MarkLen bounds the length of a cut's mark.
const MarkLen = len("…(+") + 20 + len(" bytes)")

// appendEscaped appends s escaped to b, at most limit bytes of it, and
// reports whether it cut.
func appendEscaped(b []byte, s string, limit int, quote bool) ([]byte, bool) {
	start := len(b)
	var esc [utf8.UTFMax * 3]byte // the longest escape is \U0010ffff
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var piece []byte
		switch {
		case r == utf8.RuneError && size == 1:
			piece = append(esc[:0], `\x`...)
			piece = append(piece, hex[s[i]>>4], hex[s[i]&0xf])
		case r == '\\' || quote && r == '"':
			piece = append(esc[:0], '\\', byte(r))
		case unicode.IsPrint(r):
			piece = append(esc[:0], s[i:i+size]...)
		default:
			q := strconv.AppendQuoteRuneToASCII(esc[:0], r)
			piece = q[1 : len(q)-1] // without the single quotes
		}
		if len(b)-start+len(piece) > limit {
			b = append(b, "…(+"...)
			b = strconv.AppendInt(b, int64(len(s)-i), 10)
			return append(b, " bytes)"...), true
		}
		b = append(b, piece...)
		i += size
	}
	return b, false
}

const hex = "0123456789abcdef"
