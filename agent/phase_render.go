package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/state"
)

// renderInit writes the InitConfiguration and ClusterConfiguration kubeadm
// init reads.
func renderInit(ctx context.Context, d Data) error {
	cfg := d.Config()
	ver, err := targetVersion(ctx, d)
	if err != nil {
		return err
	}
	// A fresh key for every render: kubeadm init uploads the certificates
	// with it (--upload-certs); serve hands it to joining masters.
	key, err := kubeadm.GenerateCertificateKey(nil)
	if err != nil {
		return err
	}
	out, err := kubeadm.RenderInit(kubeadm.InitParams{
		KubernetesVersion: ver,
		NodeName:          cfg.NodeName,
		AdvertiseAddress:  cfg.Address,
		BindPort:          cfg.Port,
		PodSubnet:         cfg.PodsNetwork,
		ServiceSubnet:     cfg.ServicesNetwork,
		Token:             d.State().Token,
		TokenTTL:          cfg.TokenTTL,
		// kubeadm's own taint handling (taints: [] when untainted) is
		// enough; no kubectl taint afterwards.
		TaintControlPlane: cfg.TaintedMaster,
		IgnorePreflight:   cfg.IgnorePreflight,
		NodeLabels:        nodeLabels(d),
		ProviderID:        kubeadm.ProviderID(d.Node().VMID),
		// Always an endpoint, even with one master: kubeadm adds control
		// planes only to a cluster initialised with one.
		ControlPlaneEndpoint: cfg.Endpoint,
		CertSANs:             endpointSANs(cfg.Endpoint),
		CertificateKey:       key,
		CertificateValidity:  cfg.CertValidity,
	})
	if err != nil {
		return fmt.Errorf("rendering init config: %w", err)
	}
	return writeSecretFile(d, InitConfigFile, out)
}

// renderJoin writes the JoinConfiguration from the master's published data.
func renderJoin(ctx context.Context, d Data) error {
	cfg, m := d.Config(), d.Master()
	ver, err := targetVersion(ctx, d)
	if err != nil {
		return err
	}
	p := kubeadm.JoinParams{
		KubernetesVersion: ver,
		NodeName:          cfg.NodeName,
		NodeIP:            cfg.Address,
		APIServerEndpoint: joinEndpoint(cfg, m),
		Token:             m.Token,
		CACertHash:        m.Hash,
		IgnorePreflight:   cfg.IgnorePreflight,
		NodeLabels:        nodeLabels(d),
		ProviderID:        kubeadm.ProviderID(d.Node().VMID),
	}
	if d.Node().Kind == KindControlPlane {
		p.ControlPlane = &kubeadm.JoinControlPlane{
			AdvertiseAddress:  cfg.Address,
			BindPort:          cfg.Port,
			CertificateKey:    m.CertificateKey,
			TaintControlPlane: cfg.TaintedMaster,
		}
	}
	out, err := kubeadm.RenderJoin(p)
	if err != nil {
		return fmt.Errorf("rendering join config: %w", err)
	}
	return writeSecretFile(d, JoinConfigFile, out)
}

// joinEndpoint is where a node joins: the cluster's stable endpoint (this
// node's balancer or the user's VIP), never one master's address, so that
// losing that master loses nothing. A master that published no endpoint
// initialised a cluster without one (an older agent): its own address then.
func joinEndpoint(cfg *Config, m *Master) string {
	if m.Endpoint == "" && m.Address.IsValid() {
		return netip.AddrPortFrom(m.Address, uint16(m.Port)).String() //nolint:gosec // port validated in wait-master
	}
	return cfg.Endpoint
}

// endpointSANs names the endpoint's host in the API server certificate
// (kubeadm adds it too; listing it says so where the config is read).
func endpointSANs(ep string) []string {
	h, _, err := net.SplitHostPort(ep)
	if err != nil || h == "" {
		return nil
	}
	return []string{h}
}

// nodeLabels are the labels this node registers with: its VM ID, by which
// serve maps Nodes registered before the provider ID (kubeadm.ProviderID)
// to VMs.
func nodeLabels(d Data) map[string]string {
	return map[string]string{kubeadm.LabelVMID: strconv.Itoa(d.Node().VMID)}
}

// versionTimeout bounds `kubeadm version`, which reads nothing but itself.
const versionTimeout = time.Minute

// targetVersion is the Kubernetes release to render for: the image's
// kubeadm, which discovery read (and checked against the template's ask).
func targetVersion(_ context.Context, d Data) (string, error) {
	if v := d.Node().KubeadmVersion; v != "" {
		return v, nil
	}
	return "", errors.New("the image's Kubernetes version is unknown (discovery did not read it)")
}

// writeSecretFile writes a file holding a token: 0600 in the 0700 state
// directory.
func writeSecretFile(d Data, path string, data []byte) error {
	if err := d.Root().MkdirAll(state.Dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", state.Dir, err)
	}
	if err := d.Root().WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
