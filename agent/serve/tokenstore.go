package serve

import (
	"context"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"

	"github.com/onekube/onekube/agent/kubeadm"
)

// The join tokens onekube owns live only as bootstrap-token Secrets in
// kube-system, which is where kubeadm, the API server's bootstrap
// authenticator, bootstrapsigner and tokencleaner look for them. Nothing
// else holds them: a restart of serve reads them back from there.

// ownedTokens lists onekube's tokens (kubeadm.TokenDescription), latest
// expiry first; a token without expiry sorts first (it never expires,
// which onekube never makes, but an edited Secret could say so).
func ownedTokens(ctx context.Context, cs kubernetes.Interface) ([]kubeadm.OwnedToken, error) {
	list, err := cs.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("type", string(bootstrapapi.SecretTypeBootstrapToken)).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("listing bootstrap tokens: %w", err)
	}
	var out []kubeadm.OwnedToken
	for i := range list.Items {
		t, ok, err := kubeadm.ReadTokenSecret(&list.Items[i])
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, t)
		}
	}
	sortByExpiry(out)
	return out, nil
}

// sortByExpiry orders tokens latest expiry first (no expiry first).
func sortByExpiry(toks []kubeadm.OwnedToken) {
	sort.Slice(toks, func(i, j int) bool {
		a, b := toks[i].Expires, toks[j].Expires
		if a.IsZero() != b.IsZero() {
			return a.IsZero()
		}
		return a.After(b)
	})
}

// current is the token to hand out at now: the one living longest that is
// neither expired nor retired.
func current(toks []kubeadm.OwnedToken, now time.Time) (kubeadm.OwnedToken, bool) {
	for _, t := range toks {
		if !t.Retired.IsZero() {
			continue
		}
		if !t.Expires.IsZero() && !t.Expires.After(now) {
			return kubeadm.OwnedToken{}, false
		}
		return t, true
	}
	return kubeadm.OwnedToken{}, false
}

// setRetired marks a token retired at at, or hands it out again (zero at).
func setRetired(ctx context.Context, cs kubernetes.Interface, id string, at time.Time) error {
	val := "null"
	if !at.IsZero() {
		val = `"` + at.UTC().Format(time.RFC3339) + `"`
	}
	patch := []byte(`{"metadata":{"annotations":{"` + kubeadm.AnnotationRetired + `":` + val + `}}}`)
	name := bootstrapapi.BootstrapTokenSecretPrefix + id
	if _, err := cs.CoreV1().Secrets(metav1.NamespaceSystem).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("marking bootstrap token %s: %w", name, err)
	}
	return nil
}

// mintToken creates a fresh token expiring at expires.
func mintToken(ctx context.Context, cs kubernetes.Interface, expires time.Time) (kubeadm.OwnedToken, error) {
	tok, err := kubeadm.GenerateToken(nil)
	if err != nil {
		return kubeadm.OwnedToken{}, err
	}
	s, err := kubeadm.TokenSecret(tok, expires)
	if err != nil {
		return kubeadm.OwnedToken{}, err
	}
	if _, err := cs.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		return kubeadm.OwnedToken{}, fmt.Errorf("creating bootstrap token %s: %w", s.Name, err)
	}
	return kubeadm.ReadTokenSecretMust(s), nil
}

// deleteToken deletes a token's Secret; one already gone is fine.
func deleteToken(ctx context.Context, cs kubernetes.Interface, id string) error {
	name := bootstrapapi.BootstrapTokenSecretPrefix + id
	err := cs.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting bootstrap token %s: %w", name, err)
	}
	return nil
}
