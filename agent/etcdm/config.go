package etcdm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/onekube/onekube/agent/system"
)

// Files kubeadm writes on a control plane (cmd/kubeadm/app/constants:
// EtcdCACertName, EtcdHealthcheckClientCertName/KeyName; the static pod).
// kubeadm's own etcd client uses the healthcheck-client certificate for
// member add and remove (util/etcd NewFromCluster), and so does this one.
const (
	EtcdManifest = "/etc/kubernetes/manifests/etcd.yaml"
	EtcdCAFile   = "/etc/kubernetes/pki/etcd/ca.crt"
	EtcdCertFile = "/etc/kubernetes/pki/etcd/healthcheck-client.crt"
	EtcdKeyFile  = "/etc/kubernetes/pki/etcd/healthcheck-client.key"
)

// Config says how to reach etcd.
type Config struct {
	// Endpoints are client URLs; the client learns the others from the
	// member list.
	Endpoints []string
	// CAFile, CertFile and KeyFile are the TLS client setup; all empty for
	// an http:// etcd (never kubeadm's, which is always TLS).
	CAFile, CertFile, KeyFile string
	// Dial, when set, opens connections (a test reaching VMs through a
	// switch); nil dials directly.
	Dial func(ctx context.Context, addr string) (net.Conn, error)
}

// FromManifest reads this control plane's etcd client URL from the etcd
// static pod kubeadm wrote (its --advertise-client-urls) and pairs it with
// kubeadm's etcd client certificate, under root.
func FromManifest(root system.Root) (Config, error) {
	b, err := root.ReadFile(EtcdManifest)
	if err != nil {
		return Config{}, fmt.Errorf("reading the etcd manifest: %w", err)
	}
	urls, err := advertisedClientURLs(b)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", EtcdManifest, err)
	}
	c := Config{Endpoints: urls}
	if strings.HasPrefix(urls[0], "https://") {
		c.CAFile, c.CertFile, c.KeyFile = root.Path(EtcdCAFile), root.Path(EtcdCertFile), root.Path(EtcdKeyFile)
	}
	return c, nil
}

// advertisedClientURLs finds --advertise-client-urls in an etcd pod.
func advertisedClientURLs(manifest []byte) ([]string, error) {
	var pod corev1.Pod
	if err := yaml.Unmarshal(manifest, &pod); err != nil {
		return nil, err
	}
	for _, c := range pod.Spec.Containers {
		for _, a := range append(append([]string{}, c.Command...), c.Args...) {
			v, ok := strings.CutPrefix(a, "--advertise-client-urls=")
			if !ok {
				continue
			}
			var out []string
			for _, u := range strings.Split(v, ",") {
				p, err := url.Parse(strings.TrimSpace(u))
				if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
					return nil, fmt.Errorf("--advertise-client-urls has %q, not a client URL", u)
				}
				out = append(out, p.String())
			}
			if len(out) > 0 {
				return out, nil
			}
		}
	}
	return nil, errors.New("no --advertise-client-urls in the etcd container")
}
