package agent

import (
	"context"
	"fmt"
	"strings"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// joinKeys are what a master publishes for workers to join with, READY
// first: erasing it first means no reader ever sees READY without keys.
// A worker publishes READY and its node name.
var (
	joinKeys   = []string{vmcontext.KeyReady, vmcontext.KeyPubToken, vmcontext.KeyPubHash, vmcontext.KeyPubMaster, vmcontext.KeyPubPort, vmcontext.KeyPubNodeName, vmcontext.KeyPubKind, vmcontext.KeyPubEndpoint}
	workerKeys = []string{vmcontext.KeyReady, vmcontext.KeyPubNodeName}
)

// publishedCluster lists the join data vm has published (a master's
// cluster), "" keys left out; nil means it published none.
func publishedCluster(vm *onegate.VM) []string {
	var out []string
	for _, k := range []string{vmcontext.KeyPubMaster, vmcontext.KeyPubToken, vmcontext.KeyPubHash} {
		if strings.TrimSpace(vm.UserTemplate[k]) != "" {
			out = append(out, k)
		}
	}
	if isReady(vm) {
		out = append(out, vmcontext.KeyReady+"=YES")
	}
	return out
}

func isReady(vm *onegate.VM) bool {
	// A claim: readiness only gates reading a VM's other claims, each
	// checked where it is used (NICs, CA pin, sealed grant).
	return strings.EqualFold(strings.TrimSpace(vm.Claim(vmcontext.KeyReady).Unverified()), "YES")
}

// clearPublished removes the keys this VM published in an earlier
// bootstrap, before a new attempt: a stale READY=YES would tell OneFlow and
// the workers that a cluster is up which no longer is. Only keys present
// in this VM's discovered user template are erased (an absent one gets 500
// "attribute not found"). Where erase fails (it does on 5.12, whose
// escape_attr mangles the key), READY is overwritten with NO in one
// update, which every reader treats as not ready.
func clearPublished(ctx context.Context, d Data, keys []string) error {
	self := d.Node().Self
	var present []string
	for _, k := range keys {
		if _, ok := self.UserTemplate[k]; ok {
			present = append(present, k)
		}
	}
	if len(present) == 0 {
		return nil
	}
	d.Log().Warn("clearing what this VM published before", "keys", strings.Join(present, ","))
	for i, k := range present {
		err := d.OneGate().EraseVMKey(ctx, k)
		if err == nil || onegate.IsAttributeNotFound(err) {
			delete(self.UserTemplate, k)
			continue
		}
		if i > 0 || k != vmcontext.KeyReady {
			// READY is gone: what is left is inert for every reader.
			d.Log().Warn("could not erase a stale key", "key", k, "error", err)
			continue
		}
		d.Log().Warn("erase failed; overwriting READY instead", "error", err)
		w := oneGateWaiter(d, "clearing READY")
		if err := w.run(ctx, func(ctx context.Context) error {
			return d.OneGate().UpdateVM(ctx, onegate.KV{Key: vmcontext.KeyReady, Value: "NO"})
		}); err != nil {
			return fmt.Errorf("clearing the stale READY=YES of an earlier bootstrap: %w", err)
		}
		self.UserTemplate[vmcontext.KeyReady] = "NO"
	}
	return nil
}
