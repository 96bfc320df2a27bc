package serve

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// serve's client follows admin.conf: after the kubeconfig's embedded
// certificate is renewed, requests carry the new one, also over a
// connection opened before (the old one is closed).
func TestReloadingConfigFollowsRenewal(t *testing.T) {
	t.Parallel()
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.TLS.PeerCertificates[0].Subject.CommonName)
	}))
	ts.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	ts.StartTLS()
	defer ts.Close()
	path := filepath.Join(t.TempDir(), "admin.conf")
	writeKubeconfig(t, path, ts.URL, ts.Certificate().Raw, "kubernetes-admin-1")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rc, err := ReloadingConfig(ctx, path, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		t.Fatal(err)
	}
	get := func() string {
		resp, err := hc.Get(ts.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := get(); got != "kubernetes-admin-1" {
		t.Fatalf("first request as %q", got)
	}
	writeKubeconfig(t, path, ts.URL, ts.Certificate().Raw, "kubernetes-admin-2")
	deadline := time.Now().Add(5 * time.Second)
	for get() != "kubernetes-admin-2" {
		if time.Now().After(deadline) {
			t.Fatal("still the old certificate 5 s after the kubeconfig was renewed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func writeKubeconfig(t *testing.T, path, server string, caDER []byte, cn string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["k"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: pemCert(caDER)}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{ClientCertificateData: pemCert(der), ClientKeyData: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "k", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".tmp", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}
