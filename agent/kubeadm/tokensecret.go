package kubeadm

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"

	vmcontext "github.com/onekube/onekube/context"
)

// TokenDescription marks the bootstrap tokens onekube owns: the one
// `kubeadm init` creates from onekube's init config and every one serve
// mints. Tokens with another description (an admin's `kubeadm token
// create`) are never touched.
const TokenDescription = tokenDescription

// TokenSecret is the bootstrap-token Secret for tok, as kubeadm writes it
// (kube-system/bootstrap-token-<id>, bootstrapapi keys), with onekube's
// description, usages and group, expiring at expires (RFC 3339, UTC).
func TokenSecret(tok vmcontext.Secret, expires time.Time) (*corev1.Secret, error) {
	if err := checkToken("the bootstrap token", tok); err != nil {
		return nil, err
	}
	id, secret, _ := strings.Cut(tok.Reveal(), ".")
	data := map[string][]byte{
		bootstrapapi.BootstrapTokenIDKey:          []byte(id),
		bootstrapapi.BootstrapTokenSecretKey:      []byte(secret),
		bootstrapapi.BootstrapTokenExpirationKey:  []byte(expires.UTC().Format(time.RFC3339)),
		bootstrapapi.BootstrapTokenDescriptionKey: []byte(tokenDescription),
		bootstrapapi.BootstrapTokenExtraGroupsKey: []byte(tokenGroup),
	}
	for _, u := range tokenUsages {
		data[bootstrapapi.BootstrapTokenUsagePrefix+u] = []byte("true")
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapapi.BootstrapTokenSecretPrefix + id, Namespace: metav1.NamespaceSystem},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		Data:       data,
	}, nil
}

// OwnedToken is a bootstrap token onekube owns, read back from its Secret.
type OwnedToken struct {
	ID      string // the public half; the Secret is bootstrap-token-<ID>
	Token   vmcontext.Secret
	Expires time.Time // zero: the Secret has no expiration
	// Retired is when serve stopped handing the token out (annotation
	// AnnotationRetired); zero while it is handed out.
	Retired time.Time
}

// AnnotationRetired marks a token serve no longer publishes, with the time
// it stopped (RFC 3339). The Secret outlives that moment by a grace period,
// so a worker that read the token just before OneGate's copy was erased
// still finishes its join.
const AnnotationRetired = "onekube.io/retired-at"

// ReadTokenSecret reads a bootstrap-token Secret. ok is false for a Secret
// onekube does not own (another description or type); a malformed one of
// ours is an error that never carries the token.
func ReadTokenSecret(s *corev1.Secret) (tok OwnedToken, ok bool, err error) {
	if s.Type != bootstrapapi.SecretTypeBootstrapToken || string(s.Data[bootstrapapi.BootstrapTokenDescriptionKey]) != tokenDescription {
		return OwnedToken{}, false, nil
	}
	id := string(s.Data[bootstrapapi.BootstrapTokenIDKey])
	t := vmcontext.NewSecret(id + "." + string(s.Data[bootstrapapi.BootstrapTokenSecretKey]))
	if !ValidToken(t.Reveal()) || s.Name != bootstrapapi.BootstrapTokenSecretPrefix+id {
		return OwnedToken{}, true, fmt.Errorf("%w: secret %s/%s does not hold a well-formed token", ErrToken, s.Namespace, s.Name)
	}
	tok = OwnedToken{ID: id, Token: t}
	if raw := s.Annotations[AnnotationRetired]; raw != "" {
		if tok.Retired, err = time.Parse(time.RFC3339, raw); err != nil {
			return OwnedToken{}, true, fmt.Errorf("%w: secret %s/%s: %s %q is not RFC 3339", ErrToken, s.Namespace, s.Name, AnnotationRetired, raw)
		}
	}
	if raw := string(s.Data[bootstrapapi.BootstrapTokenExpirationKey]); raw != "" {
		if tok.Expires, err = time.Parse(time.RFC3339, raw); err != nil {
			return OwnedToken{}, true, fmt.Errorf("%w: secret %s/%s: expiration %q is not RFC 3339", ErrToken, s.Namespace, s.Name, raw)
		}
	}
	return tok, true, nil
}

// ReadTokenSecretMust reads back a Secret TokenSecret just built.
func ReadTokenSecretMust(s *corev1.Secret) OwnedToken {
	t, ok, err := ReadTokenSecret(s)
	if err != nil || !ok {
		panic(fmt.Sprintf("kubeadm: a Secret TokenSecret built does not read back (ok=%v): %v", ok, err))
	}
	return t
}
