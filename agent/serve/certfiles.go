package serve

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/onekube/onekube/agent/system"
)

// Where kubeadm keeps a master's certificates (cmd/kubeadm/app/constants/
// constants.go: KubernetesDir, DefaultCertificateDir, the *KubeConfigFileName
// constants). kubelet.conf is left out: it points at the kubelet's own
// rotating client certificate (componentconfigs/kubelet.go), which kubeadm
// does not renew either.
const (
	PKIDir = "/etc/kubernetes/pki"
)

// RenewedKubeconfigs are the kubeconfigs `kubeadm certs renew all` renews,
// each with an embedded client certificate. super-admin.conf exists only
// on the master that ran `kubeadm init`.
var RenewedKubeconfigs = []string{
	"/etc/kubernetes/admin.conf",
	"/etc/kubernetes/super-admin.conf",
	"/etc/kubernetes/controller-manager.conf",
	"/etc/kubernetes/scheduler.conf",
}

// LeafCert is one leaf certificate found on disk.
type LeafCert struct {
	Path     string // under the root; for a kubeconfig, the file
	NotAfter time.Time
}

// ReadLeafCerts reads the expiry of every leaf certificate kubeadm renews
// on this master: the non-CA certificates in the PKI directory and its
// etcd/ subdirectory, and the client certificates embedded in the
// kubeconfigs. Missing files are skipped (an external etcd has no etcd/
// leaves); a file that cannot be read or parsed is an error, since a
// renewal would not mend it. They come back soonest first.
func ReadLeafCerts(root system.Root) ([]LeafCert, error) {
	var out []LeafCert
	for _, dir := range []string{PKIDir, PKIDir + "/etcd"} {
		names, err := filepath.Glob(filepath.Join(root.Path(dir), "*.crt"))
		if err != nil {
			return nil, err
		}
		for _, full := range names {
			rel := filepath.Join(dir, filepath.Base(full))
			b, err := os.ReadFile(full)
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", rel, err)
			}
			c, err := ParseLeafPEM(b)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", rel, err)
			}
			if c != nil {
				out = append(out, LeafCert{Path: rel, NotAfter: c.NotAfter})
			}
		}
	}
	for _, kc := range RenewedKubeconfigs {
		b, err := root.ReadFile(kc)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", kc, err)
		}
		na, err := kubeconfigClientExpiry(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kc, err)
		}
		if !na.IsZero() {
			out = append(out, LeafCert{Path: kc, NotAfter: na})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no leaf certificates under %s: not a kubeadm master", root.Path(PKIDir))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].NotAfter.Before(out[j].NotAfter) })
	return out, nil
}

// ParseLeafPEM returns the first certificate of a PEM file, or nil when it
// is a CA (CAs are not renewed by `kubeadm certs renew`).
func ParseLeafPEM(b []byte) (*x509.Certificate, error) {
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return nil, errors.New("no PEM certificate")
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parsing the certificate: %w", err)
		}
		if c.IsCA {
			return nil, nil
		}
		return c, nil
	}
}

// kubeconfigClientExpiry is the earliest NotAfter of the client
// certificates embedded in a kubeconfig (zero when it embeds none).
func kubeconfigClientExpiry(b []byte) (time.Time, error) {
	cfg, err := clientcmd.Load(b)
	if err != nil {
		return time.Time{}, fmt.Errorf("parsing the kubeconfig: %w", err)
	}
	var earliest time.Time
	for _, ai := range cfg.AuthInfos {
		if len(ai.ClientCertificateData) == 0 {
			continue
		}
		c, err := ParseLeafPEM(ai.ClientCertificateData)
		if err != nil {
			return time.Time{}, err
		}
		if c != nil && (earliest.IsZero() || c.NotAfter.Before(earliest)) {
			earliest = c.NotAfter
		}
	}
	return earliest, nil
}
