package env

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Bootstrap tokens, as the API server keeps them: kubeadm init stores each
// as a Secret bootstrap-token-<id> in kube-system, and the controller
// manager's bootstrapsigner signs cluster-info with every token that has
// not expired (its tokencleaner deletes expired ones). Join discovery
// needs that signature (cmd/kubeadm/app/discovery/token/token.go). They
// live in the API server's etcd directory, so kubeadm reset loses them.

// tokensFile is in the cluster store (APIServer.store): every control
// plane of a cluster shares it.
const tokensFile = "tokens.json"

// Token is a bootstrap token the API server knows.
type Token struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
	// Expires is zero for a token that never expires (ttl 0).
	Expires time.Time `json:"expires,omitzero"`
}

// AddTokens stores tokens (kubeadm init's bootstrap-token phase), replacing
// any of the same ID.
func (a *APIServer) AddTokens(ts ...Token) error {
	return a.locked(func() error {
		have, err := a.tokens()
		if err != nil {
			return err
		}
		for _, t := range ts {
			have = slices.DeleteFunc(have, func(o Token) bool { return o.ID == t.ID })
			have = append(have, t)
		}
		b, err := json.Marshal(have)
		if err != nil {
			return err
		}
		p := filepath.Join(a.store(), tokensFile)
		if err := os.WriteFile(p+".tmp", b, 0o600); err != nil {
			return err
		}
		return os.Rename(p+".tmp", p)
	})
}

// SignedFor returns the token cluster-info is signed with for id: one
// that exists and has not expired.
func (a *APIServer) SignedFor(id string) (Token, bool, error) {
	var out Token
	var ok bool
	err := a.locked(func() error {
		have, err := a.tokens()
		if err != nil {
			return err
		}
		for _, t := range have {
			if t.ID == id && (t.Expires.IsZero() || time.Now().Before(t.Expires)) {
				out, ok = t, true
			}
		}
		return nil
	})
	return out, ok, err
}

func (a *APIServer) tokens() ([]Token, error) {
	b, err := os.ReadFile(filepath.Join(a.store(), tokensFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ts []Token
	return ts, json.Unmarshal(b, &ts)
}
