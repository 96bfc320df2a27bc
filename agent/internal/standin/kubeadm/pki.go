package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"

	"sigs.k8s.io/yaml"
)

// A real, self-signed cluster CA, as kubeadm's certs phase writes it: the
// agent hashes it and workers pin that hash, so it must be a genuine
// certificate and not a placeholder.

type ca struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
	keyPEM  []byte
}

// newKey makes a key for ClusterConfiguration.encryptionAlgorithm.
func newKey(alg string) (crypto.Signer, error) {
	switch alg {
	case "", "RSA-2048":
		return rsa.GenerateKey(rand.Reader, 2048)
	case "RSA-3072":
		return rsa.GenerateKey(rand.Reader, 3072)
	case "RSA-4096":
		return rsa.GenerateKey(rand.Reader, 4096)
	case "ECDSA-P256":
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ECDSA-P384":
		return ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	}
	return nil, fmt.Errorf("encryptionAlgorithm: Unsupported value: %q", alg)
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 63))
}

func newCA(alg string) (*ca, error) {
	key, err := newKey(alg)
	if err != nil {
		return nil, err
	}
	sn, err := serial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: "kubernetes"},
		NotBefore:             now.Add(-5 * time.Minute),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	return &ca{cert: cert, key: key, certPEM: pemCert(der), keyPEM: keyPEM}, nil
}

// clientCert issues a client certificate (and key) signed by the CA, for the
// admin kubeconfig.
func (c *ca) clientCert(cn string, orgs ...string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	sn, err := serial()
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: sn,
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    now.Add(-5 * time.Minute),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = encodeKey(key)
	return pemCert(der), keyPEM, err
}

func pemCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func encodeKey(k crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// pinOf computes kubeadm's public key pin of a CA PEM, "sha256:<hex>". It is
// written out here rather than borrowed from agent/kubeadm so the stand-in
// checks that code instead of agreeing with it by construction.
func pinOf(caPEM []byte) (string, error) {
	blk, _ := pem.Decode(caPEM)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return "", errors.New("no CERTIFICATE PEM block")
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// kubeconfig renders a kubeconfig for one cluster and one user. user holds
// the client-go user fields (client-certificate-data, ...).
func kubeconfig(server string, caPEM []byte, userName string, user map[string]any) ([]byte, error) {
	cluster := map[string]any{"server": server}
	if caPEM != nil {
		cluster["certificate-authority-data"] = caPEM // []byte marshals as base64
	}
	ctx := userName + "@kubernetes"
	return yaml.Marshal(map[string]any{
		"apiVersion":      "v1",
		"kind":            "Config",
		"clusters":        []any{map[string]any{"name": "kubernetes", "cluster": cluster}},
		"contexts":        []any{map[string]any{"name": ctx, "context": map[string]any{"cluster": "kubernetes", "user": userName}}},
		"current-context": ctx,
		"preferences":     map[string]any{},
		"users":           []any{map[string]any{"name": userName, "user": user}},
	})
}
