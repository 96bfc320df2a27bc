//go:build realbed

package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// validJWS checks a detached JWS of cluster-info the way kubeadm discovery
// does (k8s.io/cluster-bootstrap/token/jws): compact serialization with the
// payload left out, HS256 keyed with the token secret, kid the token ID.
// Written with the standard library to keep go-jose out of the module.
func validJWS(detached, content, id, secret string) bool {
	header, sig, ok := strings.Cut(detached, "..")
	if !ok {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(header)
	if err != nil {
		return false
	}
	var h struct{ Alg, Kid string }
	if json.Unmarshal(raw, &h) != nil || h.Alg != "HS256" || h.Kid != id {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(header + "." + base64.RawURLEncoding.EncodeToString([]byte(content))))
	want := base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	return hmac.Equal([]byte(sig), []byte(want))
}
