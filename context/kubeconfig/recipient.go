package kubeconfig

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"filippo.io/age"
	"filippo.io/age/agessh"
	"golang.org/x/crypto/ssh"
)

// ErrBadRecipient: not an age X25519 recipient nor an SSH public key age
// can encrypt to.
var ErrBadRecipient = errors.New("bad recipient")

// maxRecipient bounds a recipient's text: an age recipient is 62
// characters, an 8192-bit ssh-rsa key about 1400.
const maxRecipient = 2048

// NormalizeRecipient returns the one text of a recipient that the CLI
// sends and the master compares: an age X25519 recipient as age prints it
// (age1..., lower case), or an ssh-ed25519 or ssh-rsa public key as "type
// base64", its comment dropped. Errors never quote the input.
func NormalizeRecipient(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > maxRecipient {
		return "", fmt.Errorf("%w: want 1 to %d characters", ErrBadRecipient, maxRecipient)
	}
	if strings.HasPrefix(s, "age1") {
		r, err := age.ParseX25519Recipient(s)
		if err != nil {
			return "", fmt.Errorf("%w: not an age X25519 recipient (age1...); plugin recipients are not supported", ErrBadRecipient)
		}
		return r.String(), nil
	}
	f := strings.Fields(s)
	if len(f) < 2 || (f[0] != ssh.KeyAlgoED25519 && f[0] != ssh.KeyAlgoRSA) {
		return "", fmt.Errorf("%w: want an age recipient (age1...) or an ssh-ed25519 or ssh-rsa public key", ErrBadRecipient)
	}
	raw, err := base64.StdEncoding.DecodeString(f[1])
	if err != nil {
		return "", fmt.Errorf("%w: the %s key is not base64", ErrBadRecipient, f[0])
	}
	pk, err := ssh.ParsePublicKey(raw)
	if err != nil || pk.Type() != f[0] {
		return "", fmt.Errorf("%w: not a valid %s public key", ErrBadRecipient, f[0])
	}
	canon := pk.Type() + " " + base64.StdEncoding.EncodeToString(pk.Marshal())
	if _, err := agessh.ParseRecipient(canon); err != nil {
		// agessh refuses RSA keys under 2048 bits, among others.
		return "", fmt.Errorf("%w: age cannot encrypt to this %s key: %v", ErrBadRecipient, f[0], err)
	}
	return canon, nil
}

// ParseRecipient turns a recipient's text into one age can encrypt to.
func ParseRecipient(s string) (age.Recipient, error) {
	canon, err := NormalizeRecipient(s)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(canon, "age1") {
		return age.ParseX25519Recipient(canon)
	}
	return agessh.ParseRecipient(canon)
}

// Short abbreviates a normalized recipient for messages: the type and the
// first and last characters, enough to tell keys apart.
func Short(recipient string) string {
	typ, key, ok := strings.Cut(recipient, " ")
	if !ok {
		typ, key = "", recipient
	} else {
		typ += " "
	}
	if len(key) > 16 {
		key = key[:10] + "…" + key[len(key)-6:]
	}
	return typ + key
}
