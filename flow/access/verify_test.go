package access

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/kubeconfig"
)

type testCA struct {
	cert *x509.Certificate
	pem  []byte
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T) testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return testCA{cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), key}
}

// leaf issues a client certificate; edit changes the template first.
func (ca testCA) leaf(t *testing.T, cn string, orgs []string, edit func(*x509.Certificate)) (certPEM []byte, keyPEM string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour).Truncate(time.Second),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if edit != nil {
		edit(tmpl)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalPKCS8PrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}))
}

func TestCheckPayload(t *testing.T) {
	t.Parallel()
	ca, other := newTestCA(t), newTestCA(t)
	req := kubeconfig.Request{Name: "alice", Role: kubeconfig.RoleView, TTL: time.Hour}
	group := []string{kubeconfig.Group("alice", kubeconfig.RoleView)}
	good := func() kubeconfig.Payload {
		c, k := ca.leaf(t, "alice", group, nil)
		cert, _ := parseCert(c)
		return kubeconfig.Payload{ID: "REQ0000001", User: "alice", Role: kubeconfig.RoleView, CAPEM: ca.pem, CertPEM: c,
			Key: vmcontext.NewSecret(k), NotAfter: cert.NotAfter}
	}
	if _, err := CheckPayload(good(), "REQ0000001", req, time.Now(), time.Now()); err != nil {
		t.Fatalf("a good payload: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*kubeconfig.Payload)
		want error
	}{
		{"another request", func(p *kubeconfig.Payload) { p.ID = "REQ0000002" }, ErrMismatch},
		{"another user", func(p *kubeconfig.Payload) { p.User = "bob" }, ErrMismatch},
		{"another role", func(p *kubeconfig.Payload) { p.Role = kubeconfig.RoleClusterAdmin }, ErrMismatch},
		{"CA that did not sign it", func(p *kubeconfig.Payload) { p.CAPEM = other.pem }, ErrMismatch},
		{"certificate for someone else", func(p *kubeconfig.Payload) { p.CertPEM, _ = ca.leaf(t, "bob", group, nil) }, ErrMismatch},
		{"extra group", func(p *kubeconfig.Payload) {
			p.CertPEM, _ = ca.leaf(t, "alice", append(group, "system:masters"), nil)
		}, ErrMismatch},
		{"server certificate", func(p *kubeconfig.Payload) {
			p.CertPEM, _ = ca.leaf(t, "alice", group, func(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth} })
		}, ErrMismatch},
		{"key of another certificate", func(p *kubeconfig.Payload) {
			_, k := ca.leaf(t, "alice", group, nil)
			p.Key = vmcontext.NewSecret(k)
		}, ErrMismatch},
		{"expired", func(p *kubeconfig.Payload) {
			p.CertPEM, _ = ca.leaf(t, "alice", group, func(c *x509.Certificate) {
				c.NotBefore, c.NotAfter = time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
			})
		}, ErrExpired},
	} {
		p := good()
		tc.edit(&p)
		if _, err := CheckPayload(p, "REQ0000001", req, time.Now(), time.Now()); !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestSplitEndpoint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, host string
		port     int
		ok       bool
	}{
		{"10.0.0.10", "10.0.0.10", 6443, true},
		{"k8s.example.org:8443", "k8s.example.org", 8443, true},
		{"k8s.example.org", "k8s.example.org", 6443, true},
		{"[2001:db8::1]:443", "2001:db8::1", 443, true},
		{"2001:db8::1", "2001:db8::1", 6443, true},
		{"host:0", "", 0, false},
		{"host:x", "", 0, false},
		{"https://host", "", 0, false},
		{"a b", "", 0, false},
	} {
		h, p, err := splitEndpoint(tc.in, 6443)
		if (err == nil) != tc.ok || h != tc.host || p != tc.port {
			t.Errorf("splitEndpoint(%q) = %q %d %v", tc.in, h, p, err)
		}
	}
}

func FuzzSplitEndpoint(f *testing.F) {
	for _, s := range []string{"10.0.0.1:6443", "[::1]:1", "host", ":", "[", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, p, err := splitEndpoint(s, 6443)
		if err != nil {
			return
		}
		if h == "" || p < 1 || p > 65535 || strings.ContainsAny(h, "/ ") {
			t.Fatalf("splitEndpoint(%q) = %q %d", s, h, p)
		}
	})
}

func FuzzParseIdentity(f *testing.F) {
	f.Add([]byte("# created: x\nAGE-SECRET-KEY-1QQPQQZAD7K4KFE8GFV4HE3WGWJ0P7XEU5VLR85E0Y2XHZMJNCQSQPRCQSA\n"))
	f.Add([]byte("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := ParseIdentity(b)
		if err != nil {
			return
		}
		if _, err := kubeconfig.NormalizeRecipient(id.Recipient); err != nil || len(id.Identities()) == 0 {
			t.Fatalf("parsed an identity without a usable recipient: %v", err)
		}
	})
}
