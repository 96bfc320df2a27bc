package credential

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"
)

// BenchmarkIssue signs one client certificate with an RSA-2048 CA, what
// kubeadm makes by default: the CPU a master spends per request, beside a
// P-256 key generation.
func BenchmarkIssue(b *testing.B) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	ca, err := ParseCA(selfSigned(b, key, true, time.Now().Add(time.Hour)),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	for b.Loop() {
		if _, err := ca.Issue("alice", "onekube:alice:cluster-admin", time.Hour, now, nil); err != nil {
			b.Fatal(err)
		}
	}
}
