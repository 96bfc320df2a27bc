package credential

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/kubeconfig"
)

// Backdate is how far before now a certificate starts, kubeadm's own
// CertificateBackdate (cmd/kubeadm/app/constants, v1.37.2): masters'
// clocks may differ a little, and a certificate an API server sees as not
// yet valid fails for no good reason. The CLI checks it (the protocol's
// constant).
const Backdate = kubeconfig.Backdate

// Issued is a fresh client certificate and its key.
type Issued struct {
	CertPEM  []byte
	Key      vmcontext.Secret // PEM (PKCS#8 ECDSA P-256)
	NotAfter time.Time
}

// Issue signs a client certificate for user name with the single group
// group, valid ttl from now (at most until the CA itself expires). The key
// is a new ECDSA P-256 key; rnd is crypto/rand when nil.
func (ca *CA) Issue(name, group string, ttl time.Duration, now time.Time, rnd io.Reader) (Issued, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	notAfter := now.Add(ttl)
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	if !notAfter.After(now) {
		return Issued{}, fmt.Errorf("the cluster CA expired at %s", ca.Cert.NotAfter.UTC().Format(time.RFC3339))
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rnd)
	if err != nil {
		return Issued{}, fmt.Errorf("generating a key: %w", err)
	}
	serial, err := rand.Int(rnd, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return Issued{}, fmt.Errorf("drawing a serial number: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name, Organization: []string{group}},
		NotBefore:    now.Add(-Backdate),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rnd, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return Issued{}, fmt.Errorf("signing the certificate: %w", err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Issued{}, fmt.Errorf("encoding the key: %w", err)
	}
	return Issued{
		CertPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:      vmcontext.NewSecret(string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}))),
		NotAfter: notAfter,
	}, nil
}
