package credential

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/onekube/onekube/agent/system"
)

// Where kubeadm keeps the cluster CA on every master (control-plane joins
// copy it there too).
const (
	CACertPath = "/etc/kubernetes/pki/ca.crt"
	CAKeyPath  = "/etc/kubernetes/pki/ca.key"
)

// CA is the cluster CA with its key.
type CA struct {
	Cert    *x509.Certificate
	CertPEM []byte
	Key     crypto.Signer
}

// LoadCA reads the CA from the master's disk under root.
func LoadCA(root system.Root) (*CA, error) {
	certPEM, err := root.ReadFile(CACertPath)
	if err != nil {
		return nil, fmt.Errorf("reading the cluster CA: %w", err)
	}
	keyPEM, err := root.ReadFile(CAKeyPath)
	if err != nil {
		return nil, fmt.Errorf("reading the cluster CA key: %w", err)
	}
	return ParseCA(certPEM, keyPEM)
}

// ParseCA parses a CA certificate and its key (PKCS#1 RSA, which kubeadm
// writes by default, SEC 1 EC or PKCS#8) and checks they belong together.
// Errors never include key material.
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	cb, _ := pem.Decode(certPEM)
	if cb == nil || cb.Type != "CERTIFICATE" {
		return nil, errors.New("cluster CA: no PEM certificate")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("cluster CA: %w", err)
	}
	if !cert.IsCA {
		return nil, errors.New("cluster CA: the certificate is not a CA")
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil {
		return nil, errors.New("cluster CA key: no PEM block")
	}
	key, err := parseKey(kb)
	if err != nil {
		return nil, fmt.Errorf("cluster CA key: %w", err)
	}
	if !publicEqual(cert.PublicKey, key.Public()) {
		return nil, errors.New("cluster CA key does not match its certificate")
	}
	return &CA{Cert: cert, CertPEM: pem.EncodeToMemory(cb), Key: key}, nil
}

func parseKey(b *pem.Block) (crypto.Signer, error) {
	switch b.Type {
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(b.Bytes)
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
		if err != nil {
			return nil, err
		}
		if s, ok := k.(crypto.Signer); ok {
			return s, nil
		}
		return nil, errors.New("PKCS#8 key is not a signing key")
	}
	return nil, fmt.Errorf("unsupported PEM block %q", b.Type)
}

func publicEqual(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	switch k := a.(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
		return k.(equaler).Equal(b)
	}
	return false
}
