package context

import (
	"fmt"
	"strings"
)

// Secret holds a credential: the OneGate token, a bootstrap token, a
// certificate key. Every way fmt, log/slog or encoding/json can print it
// yields a mask, so a stray %v or log field cannot leak it; Reveal is the one
// way out and is meant only for the wire and for files of mode 0600.
type Secret struct{ v string }

// Mask is what a Secret prints as.
const Mask = "<redacted>"

// NewSecret wraps s.
func NewSecret(s string) Secret { return Secret{v: s} }

// Reveal returns the secret value.
func (s Secret) Reveal() string { return s.v }

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.v == "" }

// String masks the value.
func (s Secret) String() string { return Mask }

// GoString masks the value for %#v.
func (s Secret) GoString() string { return Mask }

// Format masks the value for every verb, %x and %q included.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(Mask)) }

// MarshalJSON masks the value.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + Mask + `"`), nil }

// MarshalText masks the value (slog's text handler, yaml).
func (s Secret) MarshalText() ([]byte, error) { return []byte(Mask), nil }

// Redact replaces every occurrence of each non-empty secret in text with the
// mask. It is for text that came from elsewhere (a command's output, a server's
// error body) and may echo a secret back.
func Redact(text string, secrets ...Secret) string {
	for _, s := range secrets {
		if len(s.v) >= 4 { // shorter values would mask innocent text
			text = strings.ReplaceAll(text, s.v, Mask)
		}
	}
	return text
}
