package certgrant

import (
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

func TestSealOpenRoundTrip(t *testing.T) {
	t.Parallel()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	key := strings.Repeat("ab", 32)
	tok := "abcdef.0123456789abcdef"
	g, err := Seal(12, id.Recipient().String(), time.Unix(1800000000, 0), Payload{CertificateKey: vmcontext.NewSecret(key), Token: vmcontext.NewSecret(tok)})
	if err != nil {
		t.Fatal(err)
	}
	s := g.String()
	if strings.Contains(s, key) || strings.Contains(s, tok) || strings.Contains(s, "abcdef") {
		t.Fatal("a secret shows in the published grant")
	}
	// What OneGate must carry unharmed (context/onegate's own check).
	if err := onegate.CheckValue("ONEGATE_K8S_CERT_KEY", s); err != nil {
		t.Fatalf("grant not publishable: %v", err)
	}
	if strings.Contains(s, "=") {
		t.Error("grant holds '=', which OneGate before 6.0 cuts")
	}
	back, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	if back.VMID != 12 || back.Recipient != id.Recipient().String() || back.Expires.Unix() != 1800000000 {
		t.Errorf("parsed %+v", back)
	}
	p, err := back.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	if p.CertificateKey.Reveal() != key || p.Token.Reveal() != tok {
		t.Error("payload differs after the round trip")
	}
	other, _ := age.GenerateX25519Identity()
	if _, err := back.Open(other); err == nil {
		t.Error("another identity opened the grant")
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	id, _ := age.GenerateX25519Identity()
	r := id.Recipient().String()
	for _, s := range []string{"", "1:2:3", "x:" + r + ":1:QUJD", "1:age1bogus:1:QUJD", "1:" + r + ":0:QUJD", "1:" + r + ":5:!!", "1:" + r + ":5:", strings.Repeat("a", maxGrant+1)} {
		if _, err := Parse(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

func FuzzParse(f *testing.F) {
	id, _ := age.GenerateX25519Identity()
	f.Add("3:" + id.Recipient().String() + ":1800000000:QUJD")
	f.Add("a:b:c:d")
	f.Fuzz(func(t *testing.T, s string) {
		g, err := Parse(s)
		if err != nil {
			return
		}
		if _, err := Parse(g.String()); err != nil {
			t.Fatalf("%q parsed, its own form does not: %v", s, err)
		}
		_, _ = g.Open(id) // must not panic
	})
}
