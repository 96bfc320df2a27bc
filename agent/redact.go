package agent

import (
	"strings"

	"github.com/onekube/onekube/agent/kubeadm"
	vmcontext "github.com/onekube/onekube/context"
)

// secretsOf lists what must be masked wherever text may surface (logs,
// ONEGATE_K8S_ERROR, the state's last error, status): each secret whole
// and, for a bootstrap token, each half on its own. Tools print the parts:
// kubeadm names a token by its ID ("bootstrap-token-abcdef"), and a log
// line may carry the secret half alone. Whole values come first so a full
// token is masked as one.
func secretsOf(secrets ...vmcontext.Secret) []vmcontext.Secret {
	var out, parts []vmcontext.Secret
	for _, s := range secrets {
		if s.IsZero() {
			continue
		}
		out = append(out, s)
		if v := s.Reveal(); kubeadm.ValidToken(v) {
			id, secret, _ := strings.Cut(v, ".")
			parts = append(parts, vmcontext.NewSecret(secret), vmcontext.NewSecret(id))
		}
	}
	return append(out, parts...)
}
