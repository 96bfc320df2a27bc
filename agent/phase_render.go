package agent

import (
	"context"
	"fmt"
	"net/netip"

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
	out, err := kubeadm.RenderJoin(kubeadm.JoinParams{
		KubernetesVersion: ver,
		NodeName:          cfg.NodeName,
		NodeIP:            cfg.Address,
		APIServerEndpoint: netip.AddrPortFrom(m.Address, uint16(m.Port)).String(), //nolint:gosec // port validated in wait-master
		Token:             m.Token,
		CACertHash:        m.Hash,
	})
	if err != nil {
		return fmt.Errorf("rendering join config: %w", err)
	}
	return writeSecretFile(d, JoinConfigFile, out)
}

// targetVersion is the Kubernetes release to render for: the template's
// choice, else the kubeadm on PATH.
func targetVersion(ctx context.Context, d Data) (string, error) {
	if v := d.Config().Version; v != "" {
		return v, nil
	}
	v, err := d.Kubeadm().Version(ctx)
	if err != nil {
		return "", fmt.Errorf("finding the Kubernetes version: %w", err)
	}
	return v, nil
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
