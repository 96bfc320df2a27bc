package leave

import (
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/onekube/onekube/agent/system"
)

// KubeletConfig is the node's own credential, as kubeadm writes it.
const KubeletConfig = "/etc/kubernetes/kubelet.conf"

// LoadKubeconfig reads a kubeconfig under root. kubelet.conf names its
// client certificate by absolute path (/var/lib/kubelet/pki/...), which
// is joined to root too, so a test root works like /.
func LoadKubeconfig(root system.Root, path string) (*rest.Config, error) {
	file := root.Path(path)
	cfg, err := clientcmd.LoadFromFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	under := func(p string) string {
		if p == "" || !filepath.IsAbs(p) || string(root) == "/" || strings.HasPrefix(p, string(root)) {
			return p
		}
		return root.Path(p)
	}
	for _, a := range cfg.AuthInfos {
		a.ClientCertificate, a.ClientKey = under(a.ClientCertificate), under(a.ClientKey)
	}
	for _, c := range cfg.Clusters {
		c.CertificateAuthority = under(c.CertificateAuthority)
	}
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	rc.Timeout = 0 // every call carries the leave's deadline
	return rc, nil
}
