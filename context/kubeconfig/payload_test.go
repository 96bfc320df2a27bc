package kubeconfig

import (
	"strings"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
)

func samplePayload() Payload {
	return Payload{ID: "ABCDEF0123", User: "alice", Role: RoleView, CAPEM: []byte("-----BEGIN CERTIFICATE-----\n"),
		CertPEM: []byte("cert"), Key: vmcontext.NewSecret("key"), NotAfter: time.Unix(1767225600, 0).UTC()}
}

func TestPayloadRoundTrip(t *testing.T) {
	t.Parallel()
	p := samplePayload()
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParsePayload(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != p.ID || got.User != p.User || got.Role != p.Role || string(got.CAPEM) != string(p.CAPEM) ||
		string(got.CertPEM) != string(p.CertPEM) || got.Key.Reveal() != "key" || !got.NotAfter.Equal(p.NotAfter) {
		t.Errorf("round trip %+v", got)
	}
	for _, bad := range []string{
		"", "{}", "[]", strings.Replace(string(b), `"v":1`, `"v":2`, 1),
		strings.Replace(string(b), `"user":"alice"`, `"user":"system:masters"`, 1),
		strings.Replace(string(b), `"id":"ABCDEF0123"`, `"id":"x"`, 1),
		strings.Replace(string(b), `"v":1`, `"v":1,"extra":true`, 1),
		string(b) + "{}",
	} {
		if _, err := ParsePayload([]byte(bad)); err == nil {
			t.Errorf("ParsePayload(%.60q) accepted", bad)
		}
	}
}

func FuzzParsePayload(f *testing.F) {
	b, err := samplePayload().Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"v":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePayload(b)
		if err != nil {
			return
		}
		if _, err := p.Marshal(); err != nil {
			t.Fatalf("a parsed payload does not marshal: %v", err)
		}
	})
}
