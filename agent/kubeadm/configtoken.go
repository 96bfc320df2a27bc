package kubeadm

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/yaml"

	vmcontext "github.com/onekube/onekube/context"
)

// InitConfigToken reads the bootstrap token back from an init config file
// (the InitConfiguration's first bootstrapTokens entry): after kubeadm init
// ran, that file holds the token the cluster knows, so a rerun publishes it
// from there rather than from a copy that could differ.
func InitConfigToken(config []byte) (vmcontext.Secret, error) {
	for _, doc := range bytes.Split(config, []byte("\n---")) {
		var ic struct {
			Kind            string `json:"kind"`
			BootstrapTokens []struct {
				Token string `json:"token"`
			} `json:"bootstrapTokens"`
		}
		if err := yaml.Unmarshal(doc, &ic); err != nil {
			return vmcontext.Secret{}, fmt.Errorf("%w: reading the init config: %w", ErrToken, err)
		}
		if ic.Kind != "InitConfiguration" {
			continue
		}
		if len(ic.BootstrapTokens) == 0 {
			return vmcontext.Secret{}, fmt.Errorf("%w: the init config has no bootstrap token", ErrToken)
		}
		tok := vmcontext.NewSecret(ic.BootstrapTokens[0].Token)
		if err := checkToken("the init config's token", tok); err != nil {
			return vmcontext.Secret{}, err
		}
		return tok, nil
	}
	return vmcontext.Secret{}, fmt.Errorf("%w: no InitConfiguration in the init config", ErrToken)
}
