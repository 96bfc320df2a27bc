package agent

import (
	"context"
	"fmt"

	"github.com/onekube/onekube/agent/kubeadm"
)

// createToken makes the bootstrap token workers join with. The master makes
// it itself (crypto-random) and puts it into the init config, so no admin
// credential is ever needed to mint one. It is persisted in the state: a
// rerun after a crash must publish the token the cluster knows.
func createToken(_ context.Context, d Data) error {
	st := d.State()
	if !st.Token.IsZero() && kubeadm.ValidToken(st.Token.Reveal()) {
		return nil
	}
	tok, err := kubeadm.GenerateToken(nil)
	if err != nil {
		return fmt.Errorf("creating bootstrap token: %w", err)
	}
	st.Token = tok
	return nil
}
