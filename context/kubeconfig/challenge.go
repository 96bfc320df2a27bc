package kubeconfig

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Challenge is what a master seals to the entry's recipient before it
// signs anything: a fresh nonce, tied to the request it read. Only the
// holder of the entry's private key can open it, so only they can write
// the Proof back; a sibling that forged or rewrote the request cannot.
// A master keeps the nonce in memory only; after a restart it challenges
// again.
type Challenge struct {
	ID      string
	Request Request // as the master read it, without proof
	Nonce   []byte  // NonceSize random bytes; never logged
}

// NonceSize is the challenge nonce's length: 256 bits.
const NonceSize = 32

// challengeVersion is the sealed challenge's format.
const challengeVersion = 2

// maxChallenge bounds an opened challenge: the request dominates.
const maxChallenge = maxRequest + 256

type wireChallenge struct {
	V       int    `json:"v"`
	ID      string `json:"id"`
	Request string `json:"request"`
	Nonce   string `json:"nonce"`
}

// NewChallenge draws a nonce for request id (crypto/rand when rnd is nil).
func NewChallenge(id string, r Request, rnd io.Reader) (Challenge, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	n := make([]byte, NonceSize)
	if _, err := io.ReadFull(rnd, n); err != nil {
		return Challenge{}, fmt.Errorf("drawing a challenge: %w", err)
	}
	return Challenge{ID: id, Request: r.Asked(), Nonce: n}, nil
}

// Marshal renders the challenge for sealing.
func (c Challenge) Marshal() ([]byte, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	req, err := c.Request.Encode()
	if err != nil {
		return nil, err
	}
	return json.Marshal(wireChallenge{V: challengeVersion, ID: c.ID, Request: req, Nonce: b64.EncodeToString(c.Nonce)})
}

// ParseChallenge reads an opened challenge strictly: one JSON object of
// this version, no unknown fields, a request ID, a request without proof
// and a nonce of NonceSize bytes.
func ParseChallenge(b []byte) (Challenge, error) {
	if len(b) > maxChallenge {
		return Challenge{}, fmt.Errorf("challenge: %w: longer than %d bytes", ErrMalformed, maxChallenge)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var w wireChallenge
	if err := dec.Decode(&w); err != nil {
		return Challenge{}, fmt.Errorf("challenge: %w: %v", ErrMalformed, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Challenge{}, fmt.Errorf("challenge: %w: trailing data", ErrMalformed)
	}
	if w.V != challengeVersion {
		return Challenge{}, fmt.Errorf("challenge: %w: version %d, this onekube-flow reads %d", ErrMalformed, w.V, challengeVersion)
	}
	req, err := ParseRequest(w.Request)
	if err != nil {
		return Challenge{}, fmt.Errorf("challenge: %w", err)
	}
	nonce, err := b64.DecodeString(w.Nonce)
	if err != nil {
		return Challenge{}, fmt.Errorf("challenge: %w: the nonce is not base64url", ErrMalformed)
	}
	c := Challenge{ID: w.ID, Request: req, Nonce: nonce}
	if err := c.check(); err != nil {
		return Challenge{}, fmt.Errorf("challenge: %w: %v", ErrMalformed, err)
	}
	return c, nil
}

func (c Challenge) check() error {
	if _, id, ok := ParseKey(RequestKey(c.ID)); !ok || id != c.ID {
		return errors.New("bad request ID")
	}
	if c.Request.Proof != "" {
		return errors.New("the challenged request carries a proof")
	}
	if len(c.Nonce) != NonceSize {
		return fmt.Errorf("a nonce of %d bytes, want %d", len(c.Nonce), NonceSize)
	}
	return c.Request.check()
}

// proofDomain separates this MAC from any other use of the nonce.
const proofDomain = "onekube kubeconfig proof v2\n"

// Proof is the answer to the challenge for request id asking r: an
// HMAC-SHA256, keyed by the nonce, of the request ID and every field of
// the request but the proof. A rewrite of the name, role, validity or
// recipient, or the proof moved to another request ID, no longer matches.
func (c Challenge) Proof(id string, r Request) (string, error) {
	asked, err := r.Asked().Encode()
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, c.Nonce)
	m.Write([]byte(proofDomain + id + "\n" + asked))
	return b64.EncodeToString(m.Sum(nil)), nil
}

// Proves reports whether r (as read now, for request id) carries the
// proof of this challenge for exactly the request that was challenged.
func (c Challenge) Proves(id string, r Request) bool {
	if id != c.ID || r.Proof == "" || r.Asked() != c.Request {
		return false
	}
	want, err := c.Proof(id, r)
	return err == nil && hmac.Equal([]byte(want), []byte(r.Proof))
}

// proofLen is a proof's text: 32 bytes in base64url without padding.
const proofLen = 43

func isProofText(s string) bool {
	if len(s) != proofLen {
		return false
	}
	return checkSealedText(s) == nil
}
