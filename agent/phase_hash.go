package agent

import (
	"context"
	"fmt"

	"github.com/onekube/onekube/agent/kubeadm"
)

// discoveryHash computes the CA pin workers check the API server against
// (SHA-256 of the CA's DER SubjectPublicKeyInfo) from the ca.crt kubeadm
// init wrote, and assembles the join data this master publishes.
func discoveryHash(_ context.Context, d Data) error {
	ca, err := d.Root().ReadFile(CACertFile)
	if err != nil {
		return fmt.Errorf("reading the cluster CA: %w", err)
	}
	hash, err := kubeadm.CACertHash(ca)
	if err != nil {
		return fmt.Errorf("hashing %s: %w", CACertFile, err)
	}
	cfg := d.Config()
	*d.Master() = Master{
		VMID:    d.Node().VMID,
		Address: cfg.Address,
		Port:    cfg.Port,
		Hash:    hash,
		Token:   d.State().Token,
		// The endpoint the init config carried (renderInit: always set).
		Endpoint: cfg.Endpoint,
	}
	return nil
}
