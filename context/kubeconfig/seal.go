package kubeconfig

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"

	"filippo.io/age"
)

// Errors of Open, for the CLI's messages.
var (
	// ErrNotForYou: none of the identities can open the payload. It was
	// sealed to another recipient (a different key, or another user's
	// request), or its recipient stanza was altered.
	ErrNotForYou = errors.New("sealed to another key")
	// ErrTampered: the sealed text is not what a master wrote: bad
	// encoding, a broken age header, or a payload that fails
	// authentication.
	ErrTampered = errors.New("altered or corrupted")
)

// maxPlain bounds an opened payload.
const maxPlain = 32 << 10

// b64 is the sealed text's encoding: base64url without padding, whose
// alphabet (letters, digits, - and _) OneGate and oned store unchanged.
var b64 = base64.RawURLEncoding

// Seal encrypts plain with age to recipient (its text) and encodes it.
func Seal(plain []byte, recipient string) (string, error) {
	if len(plain) > maxPlain {
		return "", fmt.Errorf("sealing: payload of %d bytes exceeds %d", len(plain), maxPlain)
	}
	r, err := ParseRecipient(recipient)
	if err != nil {
		return "", fmt.Errorf("sealing: %w", err)
	}
	var buf bytes.Buffer
	w, err := age.Encrypt(&buf, r)
	if err != nil {
		return "", fmt.Errorf("sealing: %w", err)
	}
	if _, err := w.Write(plain); err != nil {
		return "", fmt.Errorf("sealing: %w", err)
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("sealing: %w", err)
	}
	s := b64.EncodeToString(buf.Bytes())
	if len(s) > MaxSealed {
		return "", fmt.Errorf("sealing: %d bytes sealed exceed %d", len(s), MaxSealed)
	}
	return s, nil
}

// Open decodes and decrypts a sealed text with the first identity that
// can. The plaintext is authenticated by age (every 64 KiB chunk carries
// a Poly1305 tag, the header an HMAC), so a changed byte anywhere is
// ErrTampered or ErrNotForYou, never a different payload.
func Open(sealed string, ids ...age.Identity) ([]byte, error) {
	if err := checkSealedText(sealed); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTampered, err)
	}
	raw, err := b64.DecodeString(sealed)
	if err != nil {
		return nil, fmt.Errorf("%w: not base64url", ErrTampered)
	}
	r, err := age.Decrypt(bytes.NewReader(raw), ids...)
	if err != nil {
		var nm *age.NoIdentityMatchError
		if errors.As(err, &nm) {
			return nil, ErrNotForYou
		}
		return nil, fmt.Errorf("%w: %v", ErrTampered, err)
	}
	plain, err := io.ReadAll(io.LimitReader(r, maxPlain+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTampered, err)
	}
	if len(plain) > maxPlain {
		return nil, fmt.Errorf("%w: payload longer than %d bytes", ErrTampered, maxPlain)
	}
	return plain, nil
}

// checkSealedText accepts base64url text of bounded length.
func checkSealedText(s string) error {
	if s == "" || len(s) > MaxSealed {
		return fmt.Errorf("%w: sealed text of %d bytes (want 1 to %d)", ErrMalformed, len(s), MaxSealed)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("%w: sealed text is not base64url", ErrMalformed)
		}
	}
	return nil
}
