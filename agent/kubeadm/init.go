package kubeadm

import (
	"fmt"
	"net/netip"
	"time"

	vmcontext "github.com/onekube/onekube/context"
)

// InitParams is what the first control-plane node's `kubeadm init` needs.
type InitParams struct {
	// KubernetesVersion is the full target release, e.g. "v1.37.2"; it also
	// picks the config API version. Required: the agent resolves an empty
	// input with Runner.Version.
	KubernetesVersion string
	// APIVersion overrides the choice of APIVersionFor ("" keeps it). Only a
	// version the target kubeadm reads is accepted.
	APIVersion string

	NodeName         string
	AdvertiseAddress netip.Addr // also the kubelet's node-ip
	BindPort         int        // 0: kubeadm's 6443

	PodSubnet     netip.Prefix // zero: none (the CNI must not need one)
	ServiceSubnet netip.Prefix // zero: kubeadm's 10.96.0.0/12

	Token vmcontext.Secret
	// TokenTTL must be positive: kubeadm reads 0 as "never expires", which
	// the legacy appliance used and left a cluster-joining credential in
	// OneGate forever.
	TokenTTL time.Duration

	// TaintControlPlane keeps kubeadm's control-plane taint (false: the node
	// also runs workloads, as a single-VM cluster needs).
	TaintControlPlane bool
	// IgnorePreflight names preflight checks kubeadm skips on this node.
	IgnorePreflight []string
	// NodeLabels are set on the Node by its kubelet at registration.
	NodeLabels map[string]string
	// ProviderID is the Node's spec.providerID, ProviderID(VM ID); the
	// kubelet sets it at registration and nobody can change it after.
	// Empty renders none (a Node serve then maps by its label only).
	ProviderID string

	// ControlPlaneEndpoint is the stable "host:port" every node reaches the
	// API servers through. kubeadm adds control planes only to a cluster
	// initialised with one (join preflight, "doesn't have a stable
	// controlPlaneEndpoint address"), so the agent always sets it.
	ControlPlaneEndpoint string
	// CertSANs are extra names and addresses of the API server certificate
	// (the endpoint's host, so a user's VIP or DNS name verifies).
	CertSANs []string
	// CertificateKey encrypts the certificates `init --upload-certs`
	// stores in the kubeadm-certs Secret for joining control planes.
	CertificateKey vmcontext.Secret
	// CertificateValidity is the leaf certificates' lifetime
	// (ClusterConfiguration.certificateValidityPeriod, v1beta4); 0 keeps
	// kubeadm's year. kubeadm stores it in kubeadm-config, so joining
	// masters and `kubeadm certs renew` use it too.
	CertificateValidity time.Duration
}

// initConfig is InitParams after checks, in the shape both renderers use.
type initConfig struct {
	apiVersion, k8sVersion string
	p                      InitParams
}

func (p InitParams) check() (initConfig, error) {
	k8s, err := checkKubernetesVersion(p.KubernetesVersion)
	if err != nil {
		return initConfig{}, err
	}
	api, err := resolveAPIVersion(p.APIVersion, k8s)
	if err != nil {
		return initConfig{}, err
	}
	checks := []error{
		checkNodeName(p.NodeName),
		checkAddr("AdvertiseAddress", p.AdvertiseAddress),
		checkPort("BindPort", p.BindPort),
		checkSubnet("PodSubnet", p.PodSubnet),
		checkSubnet("ServiceSubnet", p.ServiceSubnet),
		checkToken("Token", p.Token),
		checkCertificateKey(p.CertificateKey),
		checkLabels(p.NodeLabels),
		checkProviderID(p.ProviderID),
	}
	for _, err := range checks {
		if err != nil {
			return initConfig{}, err
		}
	}
	if p.TokenTTL <= 0 {
		return initConfig{}, fmt.Errorf("%w: TokenTTL must be positive, got %s (0 would mean a token that never expires)", ErrParams, p.TokenTTL)
	}
	if p.CertificateValidity < 0 {
		return initConfig{}, fmt.Errorf("%w: CertificateValidity %s is negative", ErrParams, p.CertificateValidity)
	}
	if p.ControlPlaneEndpoint != "" {
		if err := checkEndpoint("ControlPlaneEndpoint", p.ControlPlaneEndpoint); err != nil {
			return initConfig{}, err
		}
	}
	for _, san := range p.CertSANs {
		if err := checkSAN(san); err != nil {
			return initConfig{}, err
		}
	}
	return initConfig{apiVersion: api, k8sVersion: k8s, p: p}, nil
}

// RenderInit renders the config file for `kubeadm init --config`: an
// InitConfiguration and a ClusterConfiguration, built from kubeadm's own
// types and joined by "---". The output is deterministic (keys sorted) and
// holds the bootstrap token, so callers write it with mode 0600.
func RenderInit(p InitParams) ([]byte, error) {
	c, err := p.check()
	if err != nil {
		return nil, fmt.Errorf("rendering kubeadm init config: %w", err)
	}
	out, err := marshalDocs(initV1Beta4(c)...)
	if err != nil {
		return nil, fmt.Errorf("rendering kubeadm init config: %w", err)
	}
	return out, nil
}
