package kubeadm

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"strings"
)

// hashPrefix is how kubeadm spells the one hash type it supports in
// --discovery-token-ca-cert-hash and caCertHashes.
const hashPrefix = "sha256:"

// CACertHash returns the discovery hash of a cluster CA, as 64 lowercase hex
// digits without the "sha256:" prefix (the form published in
// ONEGATE_K8S_HASH). It is the SHA-256 of the certificate's DER
// SubjectPublicKeyInfo, not of the whole certificate: that is what kubeadm
// pins, so a re-signed CA with the same key keeps its hash.
func CACertHash(caPEM []byte) (string, error) {
	blk, _ := pem.Decode(caPEM)
	if blk == nil {
		return "", fmt.Errorf("%w: no PEM block found", ErrCACert)
	}
	if blk.Type != "CERTIFICATE" {
		return "", fmt.Errorf("%w: PEM block is %q, want CERTIFICATE", ErrCACert, blk.Type)
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrCACert, err)
	}
	// Hashing a leaf (apiserver.crt) would publish a hash no join can match;
	// catch the wrong file here rather than on every worker.
	if !cert.BasicConstraintsValid || !cert.IsCA {
		return "", fmt.Errorf("%w: certificate %q is not a CA", ErrCACert, cert.Subject.CommonName)
	}
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return hex.EncodeToString(sum[:]), nil
}

// ParseHash accepts a discovery hash as "sha256:<64 hex>" or bare "<64 hex>",
// in any case and with surrounding blanks, and returns the 64 lowercase hex
// digits. The input comes from OneGate, so the error describes it rather than
// trusting it to be short.
func ParseHash(s string) (string, error) {
	h := strings.TrimSpace(s)
	if len(h) >= len(hashPrefix) && strings.EqualFold(h[:len(hashPrefix)], hashPrefix) {
		h = h[len(hashPrefix):]
	}
	if len(h) != sha256.Size*2 {
		return "", fmt.Errorf("%w: want 64 hex digits (optionally prefixed by %q), got %d characters", ErrHash, hashPrefix, len(h))
	}
	if _, err := hex.DecodeString(h); err != nil {
		return "", fmt.Errorf("%w: not hexadecimal: %q", ErrHash, h)
	}
	return strings.ToLower(h), nil
}
