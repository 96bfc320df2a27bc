package main

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/onekube/onekube/agent/internal/standin/env"
)

// What kubeadm init does with files a node already has (and preflight let
// through): it uses them when they fit the cluster, and fails when not.

// loadCA reads the CA a node already has (nil, nil when it has none). As
// kubeadm's certs phase, a certificate or key alone is an error, and so
// is a certificate that is not a CA.
func loadCA(root string) (*ca, error) {
	certPEM, cerr := os.ReadFile(env.Path(root, caCertFile))
	keyPEM, kerr := os.ReadFile(env.Path(root, caKeyFile))
	switch {
	case errors.Is(cerr, os.ErrNotExist) && errors.Is(kerr, os.ErrNotExist):
		return nil, nil
	case cerr != nil:
		return nil, fmt.Errorf("couldn't load the certificate file %s: %w", caCertFile, cerr)
	case kerr != nil:
		return nil, fmt.Errorf("couldn't load the private key file %s: %w", caKeyFile, kerr)
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("%s or %s holds no PEM block", caCertFile, caKeyFile)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	if !cert.IsCA {
		return nil, errors.New("certificate ca is not a CA")
	}
	// kubeadm writes PKCS#8; an operator's CA may be PKCS#1 or SEC 1.
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		if rk, rerr := x509.ParsePKCS1PrivateKey(kb.Bytes); rerr == nil {
			key = rk
		} else if ek, eerr := x509.ParseECPrivateKey(kb.Bytes); eerr == nil {
			key = ek
		} else {
			return nil, fmt.Errorf("the CA key on disk: %w", err)
		}
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New("the CA key cannot sign")
	}
	return &ca{cert: cert, key: signer, certPEM: certPEM, keyPEM: keyPEM}, nil
}

// trustsCA reports whether the kubeconfig at p exists and trusts caPEM.
// One that exists and trusts another CA is an error in kubeadm's words
// (cmd/kubeadm/app/phases/kubeconfig/kubeconfig.go, validateKubeConfig).
func trustsCA(root, p string, caPEM []byte) (bool, error) {
	b, err := os.ReadFile(env.Path(root, p))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var kc struct {
		Clusters []struct {
			Cluster struct {
				CAData []byte `json:"certificate-authority-data"`
			} `json:"cluster"`
		} `json:"clusters"`
	}
	if err := yaml.Unmarshal(b, &kc); err != nil || len(kc.Clusters) == 0 {
		return false, fmt.Errorf("the kubeconfig file %q contains an invalid CA cert", p)
	}
	if !bytes.Equal(bytes.TrimSpace(kc.Clusters[0].Cluster.CAData), bytes.TrimSpace(caPEM)) {
		return false, fmt.Errorf("a kubeconfig file %q exists but does not contain a trusted CA in its current context's cluster. Total CA certificates found: 1", p)
	}
	return true, nil
}
