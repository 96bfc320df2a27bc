package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate/csr"
)

// currentCertFile is the kubelet's client certificate store entry: one PEM
// file with the certificate and its key, which kubelet.conf points at after
// a TLS bootstrap or kubeadm's kubelet-finalize.
var currentCertFile = filepath.Join(pkiDir, "kubelet-client-current.pem")

// credentials returns a client for the node's own identity, waiting (and
// TLS-bootstrapping when kubeadm join left a bootstrap-kubelet.conf) until
// there is one. It retries every failure: during a control-plane join the
// API server it bootstraps against is still starting.
func (k *kubelet) credentials(ctx context.Context) (*kubernetes.Clientset, error) {
	for {
		cfg, err := k.tryCredentials(ctx)
		if err == nil {
			return kubernetes.NewForConfig(cfg)
		}
		k.logf("kubelet credentials: %v", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

func (k *kubelet) tryCredentials(ctx context.Context) (*rest.Config, error) {
	if cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigFile); err == nil {
		if err := seedCertStore(); err != nil {
			return nil, err
		}
		return cfg, nil
	} else if _, serr := os.Stat(bootstrapConfigFile); serr != nil {
		return nil, fmt.Errorf("no usable %s (%v) and no %s", kubeconfigFile, err, bootstrapConfigFile)
	}
	if err := k.bootstrap(ctx); err != nil {
		return nil, err
	}
	return clientcmd.BuildConfigFromFlags("", kubeconfigFile)
}

// bootstrap is the kubelet's TLS bootstrap: a CSR for system:node:<name>
// with the kube-apiserver-client-kubelet signer, made with the bootstrap
// token's identity, approved and signed by the real kube-controller-manager;
// then the certificate store and a kubelet.conf pointing at it.
func (k *kubelet) bootstrap(ctx context.Context) error {
	bootCfg, err := clientcmd.BuildConfigFromFlags("", bootstrapConfigFile)
	if err != nil {
		return fmt.Errorf("reading %s: %w", bootstrapConfigFile, err)
	}
	client, err := kubernetes.NewForConfig(bootCfg)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	csrPEM, err := certutil.MakeCSR(key, &pkix.Name{CommonName: "system:node:" + k.nodeName, Organization: []string{"system:nodes"}}, nil, nil)
	if err != nil {
		return err
	}
	usages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	name, uid, err := csr.RequestCertificateWithContext(ctx, client, csrPEM, "", certificatesv1.KubeAPIServerClientKubeletSignerName, nil, usages, key)
	if err != nil {
		return fmt.Errorf("requesting a certificate: %w", err)
	}
	k.logf("TLS bootstrap: CSR %s sent, waiting for approval", name)
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	certPEM, err := csr.WaitForCertificate(wctx, client, name, uid)
	if err != nil {
		return fmt.Errorf("waiting for CSR %s: %w", name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := storeCert(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})); err != nil {
		return err
	}
	raw, err := clientcmd.LoadFromFile(bootstrapConfigFile)
	if err != nil {
		return err
	}
	cluster := raw.Clusters[raw.Contexts[raw.CurrentContext].Cluster]
	if cluster == nil {
		return errors.New("bootstrap kubeconfig has no cluster for its current context")
	}
	if cluster.CertificateAuthority != "" && len(cluster.CertificateAuthorityData) == 0 {
		if cluster.CertificateAuthorityData, err = os.ReadFile(cluster.CertificateAuthority); err != nil {
			return err
		}
		cluster.CertificateAuthority = ""
	}
	out := clientcmdapi.NewConfig()
	out.Clusters["default-cluster"] = cluster
	out.AuthInfos["default-auth"] = &clientcmdapi.AuthInfo{ClientCertificate: currentCertFile, ClientKey: currentCertFile}
	out.Contexts["default-context"] = &clientcmdapi.Context{Cluster: "default-cluster", AuthInfo: "default-auth", Namespace: "default"}
	out.CurrentContext = "default-context"
	data, err := clientcmd.Write(*out)
	if err != nil {
		return err
	}
	k.logf("TLS bootstrap: CSR %s approved, writing %s", name, kubeconfigFile)
	return writeAtomic(kubeconfigFile, data, 0o600)
}

// seedCertStore copies an embedded client certificate of kubelet.conf (what
// kubeadm init writes) into the certificate store, as the kubelet's
// certificate manager does on start; kubeadm's kubelet-finalize phase only
// switches kubelet.conf to the store when that file exists.
func seedCertStore() error {
	if _, err := os.Stat(currentCertFile); err == nil {
		return nil
	}
	raw, err := clientcmd.LoadFromFile(kubeconfigFile)
	if err != nil {
		return err
	}
	ctx := raw.Contexts[raw.CurrentContext]
	if ctx == nil || raw.AuthInfos[ctx.AuthInfo] == nil {
		return nil
	}
	ai := raw.AuthInfos[ctx.AuthInfo]
	if len(ai.ClientCertificateData) == 0 || len(ai.ClientKeyData) == 0 {
		return nil
	}
	return storeCert(ai.ClientCertificateData, ai.ClientKeyData)
}

// storeCert writes kubelet-client-<time>.pem and points
// kubelet-client-current.pem at it, as the kubelet's file store does.
func storeCert(certPEM, keyPEM []byte) error {
	if err := os.MkdirAll(pkiDir, 0o700); err != nil {
		return err
	}
	name := fmt.Sprintf("kubelet-client-%s.pem", time.Now().UTC().Format("2006-01-02-15-04-05"))
	if err := writeAtomic(filepath.Join(pkiDir, name), append(append([]byte{}, certPEM...), keyPEM...), 0o600); err != nil {
		return err
	}
	tmp := currentCertFile + ".tmp"
	_ = os.Remove(tmp)
	if err := os.Symlink(name, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, currentCertFile)
}

// writeAtomic writes through a temporary file, so kubeadm polling for the
// file never reads half of it.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
