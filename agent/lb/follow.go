package lb

import (
	"context"
	"errors"
	"fmt"
	"github.com/onekube/onekube/agent/lb/lbconfig"
	"io/fs"
	"net/netip"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Follower reads the API servers' own list of themselves, the Endpoints
// default/kubernetes that every kube-apiserver keeps current under the
// lease endpoint reconciler (kubeadm's default): an API server that stops
// renewing its lease drops out of it, a new one adds itself. It reads
// through the balancer's dialer, so it needs no particular master alive.
//
// The credential is the node's kubelet.conf. The Node authorizer lets a
// node `get` endpoints (its static rules, plugin/pkg/auth/authorizer/rbac/
// bootstrappolicy NodeRules: "get" on endpoints), though not list or watch,
// so this is a GET on a timer; EndpointSlices are not granted to nodes.
type Follower struct {
	Balancer *Balancer
	// Kubeconfig is the credential's file (kubelet.conf); until it exists
	// (before the node joined) Once does nothing.
	Kubeconfig string
	// Endpoint is the controlPlaneEndpoint, "127.0.0.1:6444": the API
	// servers' certificates carry its host, so TLS verifies whichever
	// backend answers.
	Endpoint string
}

// ErrNoCredential means the kubeconfig does not exist yet.
var ErrNoCredential = errors.New("no credential yet")

// Once reads the endpoints and returns them as backends ("ip:port").
func (f *Follower) Once(ctx context.Context) ([]string, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", f.Kubeconfig)
	if err != nil {
		if _, serr := os.Stat(f.Kubeconfig); errors.Is(serr, fs.ErrNotExist) {
			return nil, ErrNoCredential
		}
		return nil, fmt.Errorf("reading %s: %w", f.Kubeconfig, err)
	}
	cfg.Host = "https://" + f.Endpoint
	cfg.Dial = f.Balancer.DialContext
	cfg.WarningHandler = rest.NoWarnings{} // "v1 Endpoints is deprecated": known, and nodes get no EndpointSlices
	cfg.UserAgent = "onekube-lb"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ep, err := cs.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the endpoints default/kubernetes: %w", err)
	}
	var out []string
	for _, s := range ep.Subsets {
		port := 0
		for _, p := range s.Ports {
			if p.Name == "https" || len(s.Ports) == 1 {
				port = int(p.Port)
			}
		}
		if port == 0 {
			continue
		}
		for _, a := range s.Addresses {
			ip, err := netip.ParseAddr(a.IP)
			if err != nil {
				continue
			}
			b := lbconfig.Backend(ip, port)
			if _, err := lbconfig.ParseBackend(b); err == nil {
				out = append(out, b)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("the endpoints default/kubernetes list no API server")
	}
	if len(out) > lbconfig.MaxBackends {
		return nil, fmt.Errorf("the endpoints default/kubernetes list %d API servers, more than %d", len(out), lbconfig.MaxBackends)
	}
	return lbconfig.Normalize(out), nil
}
