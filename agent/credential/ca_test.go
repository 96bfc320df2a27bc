package credential

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"
)

func selfSigned(t testing.TB, key crypto.Signer, isCA bool, notAfter time.Time) []byte {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter, IsCA: isCA, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// kubeadm writes an RSA key in PKCS#1 by default, ECDSA in SEC 1 with
// encryptionAlgorithm ECDSA-P256; PKCS#8 is what other tools write.
func TestParseCA(t *testing.T) {
	t.Parallel()
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalECPrivateKey(ecKey)
	p8, _ := x509.MarshalPKCS8PrivateKey(ecKey)
	later := time.Now().Add(24 * time.Hour)
	rsaCA := selfSigned(t, rsaKey, true, later)
	ecCA := selfSigned(t, ecKey, true, later)
	for _, tc := range []struct {
		name      string
		cert, key []byte
		ok        bool
	}{
		{"rsa pkcs1", rsaCA, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)}), true},
		{"ec sec1", ecCA, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}), true},
		{"ec pkcs8", ecCA, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8}), true},
		{"key of another CA", rsaCA, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}), false},
		{"not a CA", selfSigned(t, ecKey, false, later), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}), false},
		{"no key", ecCA, nil, false},
		{"no certificate", nil, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}), false},
	} {
		if _, err := ParseCA(tc.cert, tc.key); (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// A certificate names one user and one group, is for client auth only,
// and never outlives the CA.
func TestIssue(t *testing.T) {
	t.Parallel()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalECPrivateKey(key)
	now := time.Now()
	caEnd := now.Add(2 * time.Hour)
	ca, err := ParseCA(selfSigned(t, key, true, caEnd), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ca.Issue("alice", "onekube:alice:view", time.Hour, now, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(c.CertPEM)
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "alice" || len(cert.Subject.Organization) != 1 || cert.Subject.Organization[0] != "onekube:alice:view" {
		t.Errorf("subject %v", cert.Subject)
	}
	if len(cert.ExtKeyUsage) != 1 || cert.ExtKeyUsage[0] != x509.ExtKeyUsageClientAuth || cert.IsCA {
		t.Errorf("usage %v, CA %v", cert.ExtKeyUsage, cert.IsCA)
	}
	if !cert.NotAfter.Equal(now.Add(time.Hour).Truncate(time.Second)) || !c.NotAfter.Equal(now.Add(time.Hour)) {
		t.Errorf("not after %s / %s", cert.NotAfter, c.NotAfter)
	}
	if err := cert.CheckSignatureFrom(ca.Cert); err != nil {
		t.Error(err)
	}
	kb, _ := pem.Decode([]byte(c.Key.Reveal()))
	k, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil || !k.(*ecdsa.PrivateKey).PublicKey.Equal(cert.PublicKey) {
		t.Errorf("key does not match the certificate: %v", err)
	}
	if long, err := ca.Issue("alice", "g", 7*24*time.Hour, now, nil); err != nil || !long.NotAfter.Equal(caEnd.Truncate(time.Second)) && !long.NotAfter.Equal(ca.Cert.NotAfter) {
		t.Errorf("beyond the CA: not after %s, err %v; want the CA's %s", long.NotAfter, err, ca.Cert.NotAfter)
	}
	if _, err := ca.Issue("alice", "g", time.Hour, caEnd.Add(time.Minute), nil); err == nil {
		t.Error("issued after the CA expired")
	}
}
