package kubeadm

import (
	"fmt"
	"net/netip"

	vmcontext "github.com/onekube/onekube/context"
)

// JoinParams is what `kubeadm join` needs on a worker (or, with
// ControlPlane, on an additional control plane).
type JoinParams struct {
	// KubernetesVersion is the cluster's release; it only picks the config
	// API version (JoinConfiguration has no version field).
	KubernetesVersion string
	APIVersion        string // overrides APIVersionFor, as in InitParams

	NodeName string
	NodeIP   netip.Addr // the kubelet's node-ip: pins the NIC on multi-NIC VMs

	// APIServerEndpoint is "ip:port", IPv6 in brackets ("[fd00::1]:6443").
	APIServerEndpoint string
	Token             vmcontext.Secret
	// CACertHash is the published hash: 64 hex digits, "sha256:" optional.
	// Discovery trusts the API server only if its CA matches it.
	CACertHash string

	ControlPlane *JoinControlPlane // nil: a worker
	// IgnorePreflight names preflight checks kubeadm skips on this node.
	IgnorePreflight []string
	// NodeLabels are set on the Node by its kubelet at registration.
	NodeLabels map[string]string
	// ProviderID is as in InitParams.
	ProviderID string
}

// JoinControlPlane makes the joining node another control plane (HA).
type JoinControlPlane struct {
	AdvertiseAddress netip.Addr
	BindPort         int              // 0: kubeadm's 6443
	CertificateKey   vmcontext.Secret // decrypts the certificates init uploaded
	// TaintControlPlane keeps kubeadm's control-plane taint, as in InitParams.
	TaintControlPlane bool
}

type joinConfig struct {
	apiVersion string
	hash       string // 64 lowercase hex
	p          JoinParams
}

func (p JoinParams) check() (joinConfig, error) {
	k8s, err := checkKubernetesVersion(p.KubernetesVersion)
	if err != nil {
		return joinConfig{}, err
	}
	api, err := resolveAPIVersion(p.APIVersion, k8s)
	if err != nil {
		return joinConfig{}, err
	}
	if err := checkNodeName(p.NodeName); err != nil {
		return joinConfig{}, err
	}
	if err := checkAddr("NodeIP", p.NodeIP); err != nil {
		return joinConfig{}, err
	}
	if err := checkLabels(p.NodeLabels); err != nil {
		return joinConfig{}, err
	}
	if err := checkProviderID(p.ProviderID); err != nil {
		return joinConfig{}, err
	}
	if err := checkEndpoint("APIServerEndpoint", p.APIServerEndpoint); err != nil {
		return joinConfig{}, err
	}
	if err := checkToken("Token", p.Token); err != nil {
		return joinConfig{}, err
	}
	if p.CACertHash == "" {
		return joinConfig{}, fmt.Errorf("%w: CACertHash is empty (joining without CA pinning is refused)", ErrParams)
	}
	hash, err := ParseHash(p.CACertHash)
	if err != nil {
		return joinConfig{}, fmt.Errorf("CACertHash: %w", err)
	}
	if cp := p.ControlPlane; cp != nil {
		if err := checkAddr("ControlPlane.AdvertiseAddress", cp.AdvertiseAddress); err != nil {
			return joinConfig{}, err
		}
		if err := checkPort("ControlPlane.BindPort", cp.BindPort); err != nil {
			return joinConfig{}, err
		}
		if cp.CertificateKey.IsZero() {
			return joinConfig{}, fmt.Errorf("%w: ControlPlane.CertificateKey is empty (needed to fetch the uploaded certificates)", ErrParams)
		}
		if err := checkCertificateKey(cp.CertificateKey); err != nil {
			return joinConfig{}, err
		}
	}
	return joinConfig{apiVersion: api, hash: hash, p: p}, nil
}

// RenderJoin renders the JoinConfiguration for `kubeadm join --config`. It
// holds the bootstrap token, so callers write it with mode 0600.
func RenderJoin(p JoinParams) ([]byte, error) {
	c, err := p.check()
	if err != nil {
		return nil, fmt.Errorf("rendering kubeadm join config: %w", err)
	}
	out, err := marshalDocs(joinV1Beta4(c))
	if err != nil {
		return nil, fmt.Errorf("rendering kubeadm join config: %w", err)
	}
	return out, nil
}
