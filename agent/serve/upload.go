package serve

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/state"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
)

// UploadConfigFile is the config `kubeadm init phase upload-certs` reads:
// it carries the certificate key (0600), because `--certificate-key`
// cannot be combined with `--config` (reference real-kubeadm-testbed.md §5).
const UploadConfigFile = state.Dir + "/upload-certs.yaml"

// KubeadmUploader uploads with the real kubeadm on this master.
type KubeadmUploader struct {
	Kubeadm  kubeadm.Runner
	Root     system.Root
	NodeName string
}

var _ Uploader = KubeadmUploader{}

// UploadCerts implements Uploader. The config names the release (else
// kubeadm looks one up online, which a VM may not reach) and this node; the
// phase reads only the certificate directory and key from it.
func (u KubeadmUploader) UploadCerts(ctx context.Context, key vmcontext.Secret) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	ver, err := u.Kubeadm.Version(ctx)
	if err != nil {
		return err
	}
	b, err := kubeadm.RenderUploadCerts(ver, u.NodeName, key)
	if err != nil {
		return err
	}
	if err := u.Root.WriteFile(UploadConfigFile, b, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", UploadConfigFile, err)
	}
	defer os.Remove(u.Root.Path(UploadConfigFile))
	return u.Kubeadm.UploadCerts(ctx, u.Root.Path(UploadConfigFile), key)
}

// InitKeyFrom returns the certificate key kubeadm init used on this master
// (its init config) and the config's modification time, which precedes the
// upload: the key is then trusted for less than its real lifetime, never
// more.
func InitKeyFrom(root system.Root, initConfig string) func() (vmcontext.Secret, time.Time, bool) {
	return func() (vmcontext.Secret, time.Time, bool) {
		b, err := root.ReadFile(initConfig)
		if err != nil {
			return vmcontext.Secret{}, time.Time{}, false
		}
		key, err := kubeadm.InitConfigCertificateKey(b)
		if err != nil || key.IsZero() {
			return vmcontext.Secret{}, time.Time{}, false
		}
		fi, err := os.Stat(root.Path(initConfig))
		if err != nil {
			return vmcontext.Secret{}, time.Time{}, false
		}
		return key, fi.ModTime(), true
	}
}
