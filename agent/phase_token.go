package agent

import (
	"context"
	"fmt"

	"github.com/onekube/onekube/agent/kubeadm"
	vmcontext "github.com/onekube/onekube/context"
)

// createToken makes the bootstrap token workers join with. The master makes
// it itself (crypto-random) and puts it into the init config, so no admin
// credential is ever needed to mint one. Once kubeadm init has run, the
// token is the one in that config (the cluster knows no other); it is
// never kept in the state file.
func createToken(_ context.Context, d Data) error {
	st := d.State()
	if st.Done(PhaseKubeadmInit) {
		tok, err := initConfigToken(d)
		if err != nil {
			return err
		}
		st.Token = tok
		return nil
	}
	tok, err := kubeadm.GenerateToken(nil)
	if err != nil {
		return fmt.Errorf("creating bootstrap token: %w", err)
	}
	st.Token = tok
	return nil
}

// initConfigToken reads the token kubeadm init used. A version 1 state
// file held a copy, used only when the config is gone.
func initConfigToken(d Data) (vmcontext.Secret, error) {
	b, err := d.Root().ReadFile(InitConfigFile)
	if err != nil {
		if tok := d.State().Token; !tok.IsZero() && kubeadm.ValidToken(tok.Reveal()) {
			return tok, nil
		}
		return vmcontext.Secret{}, fmt.Errorf("reading the bootstrap token kubeadm init used: %w", err)
	}
	tok, err := kubeadm.InitConfigToken(b)
	if err != nil {
		return vmcontext.Secret{}, fmt.Errorf("%s: %w", InitConfigFile, err)
	}
	return tok, nil
}
