package serve

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/util/connrotation"
)

// DefaultCredentialReload is how often serve re-reads its kubeconfig.
const DefaultCredentialReload = 30 * time.Second

// ReloadingConfig is a client config for a kubeconfig whose embedded
// client certificate is renewed in place (admin.conf after `kubeadm certs
// renew`). client-go reloads a client certificate only when it is given as
// files (transport/cert_rotation.go); admin.conf embeds it. So the
// kubeconfig is re-read every reload interval until ctx ends, the
// certificate is handed to each new TLS handshake, and on a change every
// open connection is closed: the API server checks a client certificate's
// validity on every request, so a connection kept on the old one would
// fail once it expires. A kubeconfig without an embedded certificate is
// returned as client-go builds it.
func ReloadingConfig(ctx context.Context, path string, every time.Duration) (*rest.Config, error) {
	rc, certPEM, keyPEM, err := loadKubeconfig(path)
	if err != nil {
		return nil, err
	}
	if len(certPEM) == 0 || len(keyPEM) == 0 {
		return rc, nil
	}
	r := &certReloader{path: path, certPEM: certPEM}
	if r.cert, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return nil, fmt.Errorf("%s: the client certificate: %w", path, err)
	}
	dialer := connrotation.NewDialer((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext)
	rt, err := transport.New(&transport.Config{
		TLS: transport.TLSConfig{
			CAData:        rc.CAData,
			ServerName:    rc.ServerName,
			GetCertHolder: &transport.GetCertHolder{GetCert: r.get},
		},
		DialHolder: &transport.DialHolder{Dial: dialer.DialContext},
	})
	if err != nil {
		return nil, err
	}
	if every <= 0 {
		every = DefaultCredentialReload
	}
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if changed, _ := r.reload(); changed {
					dialer.CloseAll()
				}
			}
		}
	}()
	out := &rest.Config{Host: rc.Host, APIPath: rc.APIPath, Transport: rt, QPS: rc.QPS, Burst: rc.Burst, Timeout: rc.Timeout, UserAgent: rc.UserAgent}
	return out, nil
}

func loadKubeconfig(path string) (rc *rest.Config, certPEM, keyPEM []byte, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, nil, err
	}
	cfg, err := clientcmd.Load(b)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	rc, err = clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if rc.CAFile != "" && len(rc.CAData) == 0 {
		if rc.CAData, err = os.ReadFile(rc.CAFile); err != nil {
			return nil, nil, nil, err
		}
	}
	return rc, rc.CertData, rc.KeyData, nil
}

// certReloader holds the current client certificate.
type certReloader struct {
	path    string
	mu      sync.Mutex
	certPEM []byte
	cert    tls.Certificate
}

func (r *certReloader) get() (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cert
	return &c, nil
}

// reload re-reads the kubeconfig; a file caught half-written or broken
// keeps the certificate in use.
func (r *certReloader) reload() (bool, error) {
	_, certPEM, keyPEM, err := loadKubeconfig(r.path)
	if err != nil {
		return false, err
	}
	if len(certPEM) == 0 {
		return false, errors.New("no client certificate")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if bytes.Equal(certPEM, r.certPEM) {
		return false, nil
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return false, err
	}
	r.cert, r.certPEM = c, certPEM
	return true, nil
}
