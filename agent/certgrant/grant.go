// Package certgrant carries the certificate key (and a bootstrap token) from
// the acting master to one joining master through OneGate without ever
// putting them there in clear (docs/architecture.md §3). The joining master
// publishes an age X25519 recipient; the acting master publishes a Grant:
// the secrets encrypted to that recipient, with the joiner's VM ID, the
// recipient and an expiry in clear so every master can tell whom it is for.
//
// The published recipient is a claim any VM of the service can write; the
// acting master seals to the one the joiner presents at its own address
// (present.go).
//
// age encryption is anonymous: anyone can encrypt to a recipient. A grant
// is therefore only as trustworthy as the master VM it is read from; the
// joining master still pins the cluster CA with the published hash, as
// every worker does.
package certgrant

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"filippo.io/age"

	vmcontext "github.com/onekube/onekube/context"
)

// Payload is what a grant carries.
type Payload struct {
	// CertificateKey decrypts the kubeadm-certs Secret.
	CertificateKey vmcontext.Secret
	// Token is a bootstrap token for the join's discovery and TLS bootstrap.
	Token vmcontext.Secret
}

type wirePayload struct {
	Key   string `json:"key"`
	Token string `json:"token"`
}

// Grant is the published form: "<vmid>:<recipient>:<expires>:<ciphertext>",
// the ciphertext base64 without padding (no '=', which OneGate before 6.0
// cuts, and nothing else OneGate refuses).
type Grant struct {
	VMID      int
	Recipient string
	Expires   time.Time
	Sealed    []byte
}

// maxGrant bounds a published grant; a real one is about 500 characters.
const maxGrant = 4096

// String formats g for OneGate.
func (g Grant) String() string {
	return fmt.Sprintf("%d:%s:%d:%s", g.VMID, g.Recipient, g.Expires.Unix(), base64.RawStdEncoding.EncodeToString(g.Sealed))
}

// Parse reads a published grant.
func Parse(s string) (Grant, error) {
	s = strings.TrimSpace(s)
	if len(s) > maxGrant {
		return Grant{}, fmt.Errorf("grant of %d characters, at most %d", len(s), maxGrant)
	}
	parts := strings.Split(s, ":")
	if len(parts) != 4 {
		return Grant{}, errors.New("grant is not <vmid>:<recipient>:<expires>:<sealed>")
	}
	id, err := strconv.Atoi(parts[0])
	if err != nil || id < 0 {
		return Grant{}, fmt.Errorf("grant VM ID %q", parts[0])
	}
	if _, err := age.ParseX25519Recipient(parts[1]); err != nil {
		return Grant{}, fmt.Errorf("grant recipient: %w", err)
	}
	exp, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || exp <= 0 {
		return Grant{}, fmt.Errorf("grant expiry %q", parts[2])
	}
	sealed, err := base64.RawStdEncoding.DecodeString(parts[3])
	if err != nil || len(sealed) == 0 {
		return Grant{}, errors.New("grant ciphertext is not base64")
	}
	return Grant{VMID: id, Recipient: parts[1], Expires: time.Unix(exp, 0), Sealed: sealed}, nil
}

// Seal encrypts p to recipient for vmid.
func Seal(vmid int, recipient string, expires time.Time, p Payload) (Grant, error) {
	r, err := age.ParseX25519Recipient(recipient)
	if err != nil {
		return Grant{}, fmt.Errorf("the joining master's recipient: %w", err)
	}
	b, err := json.Marshal(wirePayload{Key: p.CertificateKey.Reveal(), Token: p.Token.Reveal()})
	if err != nil {
		return Grant{}, err
	}
	var out bytes.Buffer
	w, err := age.Encrypt(&out, r)
	if err != nil {
		return Grant{}, fmt.Errorf("encrypting the grant: %w", err)
	}
	if _, err := w.Write(b); err != nil {
		return Grant{}, err
	}
	if err := w.Close(); err != nil {
		return Grant{}, err
	}
	return Grant{VMID: vmid, Recipient: r.String(), Expires: expires, Sealed: out.Bytes()}, nil
}

// Open decrypts g with the joining master's identity.
func (g Grant) Open(id *age.X25519Identity) (Payload, error) {
	r, err := age.Decrypt(bytes.NewReader(g.Sealed), id)
	if err != nil {
		return Payload{}, fmt.Errorf("decrypting the grant: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(r, maxGrant))
	if err != nil {
		return Payload{}, fmt.Errorf("decrypting the grant: %w", err)
	}
	var w wirePayload
	if err := json.Unmarshal(b, &w); err != nil {
		return Payload{}, fmt.Errorf("reading the grant: %w", err)
	}
	return Payload{CertificateKey: vmcontext.NewSecret(w.Key), Token: vmcontext.NewSecret(w.Token)}, nil
}
