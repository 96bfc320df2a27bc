package agent

import (
	"fmt"
	"strings"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// TokenSafetyMargin is how much life a published join token must have
// left for a worker to start a join with it. kubeadm uses the token twice
// within about a minute of starting (discovery, then the kubelet's TLS
// bootstrap); each VM keeps its own clock, and the API server judges
// expiry by the master's. Five minutes covers the join plus several
// minutes of skew between this VM and the master; serve replaces a token
// well before that (at max(TTL/2, 2×margin) left), so a waiting worker
// sees a fresh one instead of a dying one.
const TokenSafetyMargin = 5 * time.Minute

// staleToken says why the token a master published must not be used now,
// "" when it may. Without ONEGATE_K8S_TOKEN_EXPIRES (published by
// bootstrap just before serve took over, or by a legacy master), the
// token is used as before: kubeadm's own check is the last word.
func staleToken(vm *onegate.VM, now time.Time) string {
	raw := strings.TrimSpace(vm.UserTemplate[vmcontext.KeyPubTokenExpires])
	if raw == "" {
		return ""
	}
	exp, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		return "malformed " + vmcontext.KeyPubTokenExpires
	}
	left := exp.Sub(now)
	if left < TokenSafetyMargin {
		return fmt.Sprintf("its join token expires at %s, %s from now by this VM's clock, within the %s safety margin; waiting for a fresh one",
			exp.UTC().Format(time.RFC3339), left.Round(time.Second), TokenSafetyMargin)
	}
	return ""
}
