package kubeadm

import (
	"crypto/rand"
	"fmt"
	"io"

	vmcontext "github.com/onekube/onekube/context"
)

// Bootstrap token shape, as k8s.io/cluster-bootstrap defines it: a public
// 6-character ID, a dot, a 16-character secret, over [a-z0-9].
const (
	tokenIDLen     = 6
	tokenSecretLen = 16
	tokenLen       = tokenIDLen + 1 + tokenSecretLen
	tokenAlphabet  = "0123456789abcdefghijklmnopqrstuvwxyz"
)

// GenerateToken returns a fresh bootstrap token drawn from r, or from
// crypto/rand when r is nil. r is a parameter so tests can be deterministic;
// production passes nil.
func GenerateToken(r io.Reader) (vmcontext.Secret, error) {
	if r == nil {
		r = rand.Reader
	}
	// Rejection sampling keeps every character uniform: 252 = 7*36 is the
	// largest multiple of 36 below 256, so bytes >= 252 are drawn again.
	const limit = 256 - 256%len(tokenAlphabet)
	out := make([]byte, 0, tokenLen)
	buf := make([]byte, 32)
	for len(out) < tokenLen {
		if _, err := io.ReadFull(r, buf); err != nil {
			return vmcontext.Secret{}, fmt.Errorf("generating bootstrap token: %w", err)
		}
		for _, b := range buf {
			if int(b) >= limit || len(out) == tokenLen {
				continue
			}
			if len(out) == tokenIDLen {
				out = append(out, '.')
			}
			out = append(out, tokenAlphabet[int(b)%len(tokenAlphabet)])
		}
	}
	return vmcontext.NewSecret(string(out)), nil
}

// ValidToken reports whether s is exactly a bootstrap token, the same rule as
// kubeadm's \A([a-z0-9]{6})\.([a-z0-9]{16})\z.
func ValidToken(s string) bool {
	if len(s) != tokenLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i == tokenIDLen {
			if c != '.' {
				return false
			}
			continue
		}
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// checkToken validates a token held as a Secret without ever putting its value
// into the error.
func checkToken(what string, s vmcontext.Secret) error {
	if s.IsZero() {
		return fmt.Errorf("%w: %s is empty", ErrToken, what)
	}
	if !ValidToken(s.Reveal()) {
		return fmt.Errorf("%w: %s is not of the form [a-z0-9]{6}.[a-z0-9]{16}", ErrToken, what)
	}
	return nil
}
