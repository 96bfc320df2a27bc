package agent

import (
	"context"
	"strconv"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// publishMaster writes the join data and READY=YES in ONE OneGate update, so
// a worker never sees READY without the keys, nor keys without READY.
// ONEGATE_K8S_MASTER is a bare IP and ONEGATE_K8S_HASH 64 hex digits, the
// formats of the legacy appliance.
func publishMaster(ctx context.Context, d Data) error {
	m := d.Master()
	return publish(ctx, d, []onegate.KV{
		{Key: vmcontext.KeyPubMaster, Value: m.Address.String()},
		{Key: vmcontext.KeyPubPort, Value: strconv.Itoa(m.Port)},
		{Key: vmcontext.KeyPubToken, Value: m.Token.Reveal()},
		{Key: vmcontext.KeyPubHash, Value: m.Hash},
		{Key: vmcontext.KeyPubNodeName, Value: d.Config().NodeName},
		{Key: vmcontext.KeyPubPhase, Value: PhaseDone},
		{Key: vmcontext.KeyReady, Value: "YES"},
	})
}

// publishWorker reports the join done.
func publishWorker(ctx context.Context, d Data) error {
	return publish(ctx, d, []onegate.KV{
		{Key: vmcontext.KeyPubNodeName, Value: d.Config().NodeName},
		{Key: vmcontext.KeyPubPhase, Value: PhaseDone},
		{Key: vmcontext.KeyReady, Value: "YES"},
	})
}

// publish clears an error an earlier failed run left, then sends kvs,
// riding through OneGate failures. It records what it published, with the
// token masked.
func publish(ctx context.Context, d Data, kvs []onegate.KV) error {
	st := d.State()
	if st.LastError != "" {
		// Best effort: the erase fails harmlessly when the key is gone.
		if err := d.OneGate().EraseVMKey(ctx, vmcontext.KeyPubError); err != nil {
			d.Log().Warn("clearing the previous error in OneGate failed", "error", err)
		}
	}
	w := oneGateWaiter(d, "publishing to OneGate")
	if err := w.run(ctx, func(ctx context.Context) error {
		return d.OneGate().UpdateVM(ctx, kvs...)
	}); err != nil {
		return err
	}
	st.Published = map[string]string{}
	for _, kv := range kvs {
		v := kv.Value
		if kv.Key == vmcontext.KeyPubToken {
			v = vmcontext.Mask
		}
		st.Published[kv.Key] = v
	}
	st.LastError = ""
	return nil
}
