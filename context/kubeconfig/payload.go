package kubeconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	vmcontext "github.com/onekube/onekube/context"
)

// Payload is what a master seals to the requester: a client certificate
// for User with Role's group, its private key, and the cluster CA, tied to
// the request ID so an old or foreign answer cannot pass for this one.
// The CLI chooses the API server address itself, from what oned says of
// the master, so nothing here can point it elsewhere.
type Payload struct {
	ID       string
	User     string
	Role     string
	CAPEM    []byte
	CertPEM  []byte
	Key      vmcontext.Secret // PEM; the only secret
	NotAfter time.Time
}

// payloadVersion is the payload's format.
const payloadVersion = 1

// wirePayload is the JSON form; Payload keeps the key masked elsewhere.
type wirePayload struct {
	V        int       `json:"v"`
	ID       string    `json:"id"`
	User     string    `json:"user"`
	Role     string    `json:"role"`
	CA       string    `json:"ca"`
	Cert     string    `json:"cert"`
	Key      string    `json:"key"`
	NotAfter time.Time `json:"not_after"`
}

// Marshal renders the payload for sealing.
func (p Payload) Marshal() ([]byte, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	return json.Marshal(wirePayload{V: payloadVersion, ID: p.ID, User: p.User, Role: p.Role,
		CA: string(p.CAPEM), Cert: string(p.CertPEM), Key: p.Key.Reveal(), NotAfter: p.NotAfter.UTC()})
}

// ParsePayload reads an opened payload strictly: one JSON object of this
// version, no unknown fields, every field present and well-formed. It
// checks shape only; the CLI checks the certificate against its request.
func ParsePayload(b []byte) (Payload, error) {
	if len(b) > maxPlain {
		return Payload{}, fmt.Errorf("payload: %w: longer than %d bytes", ErrMalformed, maxPlain)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var w wirePayload
	if err := dec.Decode(&w); err != nil {
		return Payload{}, fmt.Errorf("payload: %w: %v", ErrMalformed, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Payload{}, fmt.Errorf("payload: %w: trailing data", ErrMalformed)
	}
	if w.V != payloadVersion {
		return Payload{}, fmt.Errorf("payload: %w: version %d, this onekube-flow reads %d", ErrMalformed, w.V, payloadVersion)
	}
	p := Payload{ID: w.ID, User: w.User, Role: w.Role, CAPEM: []byte(w.CA), CertPEM: []byte(w.Cert),
		Key: vmcontext.NewSecret(w.Key), NotAfter: w.NotAfter}
	if err := p.check(); err != nil {
		return Payload{}, fmt.Errorf("payload: %w: %v", ErrMalformed, err)
	}
	return p, nil
}

func (p Payload) check() error {
	if _, id, ok := ParseKey(RequestKey(p.ID)); !ok || id != p.ID {
		return errors.New("bad request ID")
	}
	if err := CheckName(p.User); err != nil {
		return err
	}
	if err := CheckRole(p.Role); err != nil {
		return err
	}
	if len(p.CAPEM) == 0 || len(p.CertPEM) == 0 || p.Key.IsZero() {
		return errors.New("missing CA, certificate or key")
	}
	if p.NotAfter.IsZero() {
		return errors.New("missing expiry")
	}
	return nil
}
