package kubeconfig

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	vmcontext "github.com/onekube/onekube/context"
)

// protocolVersion leads every request and answer value. Version 2 added
// the challenge: a master signs only after the requester proved it holds
// the entry's private key. legacyVersion is the one before, which a
// master still reads to tell an old onekube-flow what to do, and a CLI to
// tell an old master's refusal.
const (
	protocolVersion = "2"
	legacyVersion   = "1"
)

// ErrOldProtocol: the other side speaks protocol 1 (no challenge).
var ErrOldProtocol = errors.New("kubeconfig protocol 1")

// Done is what the CLI writes over its request once it has read the answer
// (or given up): the master then erases both keys. A merge write, so the
// CLI never replaces the whole USER_TEMPLATE and races the agent.
const Done = "done"

// ErrMalformed: a request or answer value that is not of the protocol.
var ErrMalformed = errors.New("malformed")

// Request asks a master for a kubeconfig. It is public and untrusted: any
// VM of the service can write or rewrite one. It only picks an authorized
// entry (Name with Recipient) and a role and validity within the entry's
// bounds; nothing is signed until Proof answers the master's challenge.
type Request struct {
	Name      string
	Role      string
	TTL       time.Duration
	Recipient string // normalized
	// Proof answers the master's challenge (see Challenge.Proof); empty
	// until the requester has one.
	Proof string
}

// maxRequest bounds a request value: the recipient dominates.
const maxRequest = maxRecipient + 128

// noProof stands for an empty Proof in a request value.
const noProof = "-"

// Encode renders the request value: "2 name role ttl-seconds proof
// recipient", proof "-" until there is one. It checks the request first.
func (r Request) Encode() (string, error) {
	if err := r.check(); err != nil {
		return "", err
	}
	canon, err := NormalizeRecipient(r.Recipient)
	if err != nil {
		return "", err
	}
	proof := r.Proof
	if proof == "" {
		proof = noProof
	}
	return strings.Join([]string{protocolVersion, r.Name, r.Role, strconv.FormatInt(int64(r.TTL/time.Second), 10), proof, canon}, " "), nil
}

// Asked is the request without its proof: what the challenge names and
// the proof covers, so a rewrite of any field breaks the proof.
func (r Request) Asked() Request {
	r.Proof = ""
	return r
}

func (r Request) check() error {
	if err := CheckName(r.Name); err != nil {
		return err
	}
	if err := CheckRole(r.Role); err != nil {
		return err
	}
	if r.TTL%time.Second != 0 {
		return fmt.Errorf("validity %s is not a whole number of seconds", r.TTL)
	}
	if r.Proof != "" && !isProofText(r.Proof) {
		return errors.New("the proof is not a proof")
	}
	return CheckTTL(r.TTL)
}

// ParseRequest reads a request value. Errors say what is wrong without
// quoting the value.
func ParseRequest(v string) (Request, error) {
	if len(v) > maxRequest {
		return Request{}, fmt.Errorf("request: %w: longer than %d bytes", ErrMalformed, maxRequest)
	}
	if strings.HasPrefix(v, legacyVersion+" ") {
		return Request{}, fmt.Errorf("request: %w, which this master no longer answers: upgrade onekube-flow", ErrOldProtocol)
	}
	f := strings.SplitN(v, " ", 6)
	if len(f) != 6 || f[0] != protocolVersion {
		return Request{}, fmt.Errorf("request: %w: want \"%s name role seconds proof recipient\"", ErrMalformed, protocolVersion)
	}
	secs, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil || secs <= 0 || secs > int64(MaxTTL/time.Second) || strconv.FormatInt(secs, 10) != f[3] {
		return Request{}, fmt.Errorf("request: %w: validity is not a number of seconds within %s..%s", ErrMalformed, MinTTL, formatDays(MaxTTL))
	}
	proof := f[4]
	if proof == noProof {
		proof = ""
	} else if !isProofText(proof) {
		return Request{}, fmt.Errorf("request: %w: the proof is neither %q nor a proof", ErrMalformed, noProof)
	}
	canon, err := NormalizeRecipient(f[5])
	if err != nil {
		return Request{}, fmt.Errorf("request: %w", err)
	}
	r := Request{Name: f[1], Role: f[2], TTL: time.Duration(secs) * time.Second, Proof: proof, Recipient: canon}
	if err := r.check(); err != nil {
		return Request{}, fmt.Errorf("request: %w", err)
	}
	return r, nil
}

// Key kinds.
const (
	KindRequest = "request"
	KindAnswer  = "answer"
)

// idLen is the length of a request ID: 10 of 36 symbols, 51 bits, enough
// that two users never pick the same one; the ID is no secret.
const (
	idLen     = 10
	idSymbols = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	maxIDLen  = 16
)

// NewID draws a request ID from r (crypto/rand when nil).
func NewID(r io.Reader) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	b := make([]byte, idLen)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("drawing a request ID: %w", err)
	}
	for i := range b {
		b[i] = idSymbols[int(b[i])%len(idSymbols)]
	}
	return string(b), nil
}

// RequestKey and AnswerKey name the USER_TEMPLATE keys of request id.
func RequestKey(id string) string { return vmcontext.KeyPubKubeconfigRequest + id }

// AnswerKey: see RequestKey.
func AnswerKey(id string) string { return vmcontext.KeyPubKubeconfigAnswer + id }

// ParseKey tells a request or answer key and its ID; ok is false for any
// other key, or an ID that is not 1 to 16 upper-case letters and digits.
func ParseKey(key string) (kind, id string, ok bool) {
	switch {
	case strings.HasPrefix(key, vmcontext.KeyPubKubeconfigRequest):
		kind, id = KindRequest, key[len(vmcontext.KeyPubKubeconfigRequest):]
	case strings.HasPrefix(key, vmcontext.KeyPubKubeconfigAnswer):
		kind, id = KindAnswer, key[len(vmcontext.KeyPubKubeconfigAnswer):]
	default:
		return "", "", false
	}
	if id == "" || len(id) > maxIDLen {
		return "", "", false
	}
	for i := 0; i < len(id); i++ {
		if !strings.ContainsRune(idSymbols, rune(id[i])) {
			return "", "", false
		}
	}
	return kind, id, true
}
