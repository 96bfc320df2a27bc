package kubeadm

import (
	"strings"
	"testing"
	"time"

	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstrapsecret "k8s.io/cluster-bootstrap/util/secrets"

	vmcontext "github.com/onekube/onekube/context"
)

// A minted Secret is one kubeadm and the API server's bootstrap
// authenticator read as a valid token, and reads back as ours.
func TestTokenSecretRoundTrip(t *testing.T) {
	t.Parallel()
	tok := vmcontext.NewSecret("abcdef.0123456789abcdef")
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	s, err := TokenSecret(tok, exp)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "bootstrap-token-abcdef" || s.Namespace != "kube-system" || s.Type != bootstrapapi.SecretTypeBootstrapToken {
		t.Fatalf("secret %s/%s type %s", s.Namespace, s.Name, s.Type)
	}
	if got := string(s.Data["expiration"]); got != "2030-01-02T02:04:05Z" {
		t.Errorf("expiration %q", got)
	}
	if bootstrapsecret.HasExpired(s, exp.Add(-time.Second)) || !bootstrapsecret.HasExpired(s, exp.Add(time.Second)) {
		t.Error("cluster-bootstrap reads another expiry")
	}
	if g, err := bootstrapsecret.GetGroups(s); err != nil || strings.Join(g, ",") != "system:bootstrappers,system:bootstrappers:onekube:worker" {
		t.Errorf("groups %v %v", g, err)
	}
	back, ok, err := ReadTokenSecret(s)
	if err != nil || !ok || back.ID != "abcdef" || back.Token.Reveal() != tok.Reveal() || !back.Expires.Equal(exp) {
		t.Fatalf("read back %+v ok=%v err=%v", back, ok, err)
	}
}

func TestReadTokenSecretRefuses(t *testing.T) {
	t.Parallel()
	good, _ := TokenSecret(vmcontext.NewSecret("abcdef.0123456789abcdef"), time.Now())
	for name, tc := range map[string]struct {
		edit    func(d map[string][]byte)
		ok      bool
		wantErr string
	}{
		"another description": {edit: func(d map[string][]byte) { d["description"] = []byte("admin's") }},
		"bad secret":          {edit: func(d map[string][]byte) { d["token-secret"] = []byte("SHORT") }, ok: true, wantErr: "well-formed"},
		"bad expiry":          {edit: func(d map[string][]byte) { d["expiration"] = []byte("tomorrow") }, ok: true, wantErr: "RFC 3339"},
	} {
		s := good.DeepCopy()
		tc.edit(s.Data)
		_, ok, err := ReadTokenSecret(s)
		if ok != tc.ok || (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: ok=%v err=%v", name, ok, err)
		}
		if err != nil && strings.Contains(err.Error(), "0123456789abcdef") {
			t.Errorf("%s: the error carries the token", name)
		}
	}
}
