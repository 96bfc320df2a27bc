package serve

import (
	"context"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/onekube/onekube/agent/testbed/loopback"
)

// A token serve mints is one the real API server authenticates as a
// bootstrapper, and the real tokencleaner (kube-controller-manager)
// deletes it once it expires, as it does a token nobody deleted.
func TestMintedTokenWorksAndTokencleanerDeletesIt(t *testing.T) {
	s := loopback.Start(t, loopback.Options{ControllerManager: true})
	cs := s.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tok, err := mintToken(ctx, cs, time.Now().Add(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &rest.Config{Host: s.URL, BearerToken: tok.Token.Reveal(), TLSClientConfig: rest.TLSClientConfig{CAData: s.CAPEM}}
	who, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the minted token does not authenticate: %v", err)
	}
	if got := who.Status.UserInfo.Username; got != "system:bootstrap:"+tok.ID {
		t.Errorf("authenticated as %q", got)
	}
	start := time.Now()
	for {
		toks, err := ownedTokens(ctx, cs)
		if err != nil {
			t.Fatal(err)
		}
		if len(toks) == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("tokencleaner never deleted the expired token")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("tokencleaner took %s", d)
	}
}
