package agent

import (
	"context"
	"fmt"
	"strconv"

	"github.com/onekube/onekube/agent/kubeadm"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// publishMaster writes the join data and READY=YES in ONE OneGate update, so
// a worker never sees READY without the keys, nor keys without READY.
// ONEGATE_K8S_MASTER is a bare IP and ONEGATE_K8S_HASH 64 hex digits, the
// formats of the legacy appliance. The data is checked again first: a
// corrupted state or a changed disk must never publish READY=YES with a
// token or hash kubeadm did not use.
func publishMaster(ctx context.Context, d Data) error {
	m := d.Master()
	if err := checkJoinData(d, m); err != nil {
		return err
	}
	kvs := append([]onegate.KV{
		{Key: vmcontext.KeyPubMaster, Value: m.Address.String()},
		{Key: vmcontext.KeyPubPort, Value: strconv.Itoa(m.Port)},
		{Key: vmcontext.KeyPubToken, Value: m.Token.Reveal()},
		{Key: vmcontext.KeyPubHash, Value: m.Hash},
		{Key: vmcontext.KeyPubNodeName, Value: d.Config().NodeName},
		{Key: vmcontext.KeyPubKind, Value: string(KindInit)},
		{Key: vmcontext.KeyPubEndpoint, Value: d.Config().Endpoint},
	}, exposureKVs(ctx, d)...)
	return publish(ctx, d, append(kvs,
		onegate.KV{Key: vmcontext.KeyPubPhase, Value: PhaseDone},
		onegate.KV{Key: vmcontext.KeyReady, Value: "YES"},
	))
}

// checkJoinData re-validates what publishMaster is about to send: a
// well-formed token that is the one in the init config kubeadm read, the
// hash of the CA on disk now, and an address of this VM that others can
// reach.
func checkJoinData(d Data, m *Master) error {
	if !kubeadm.ValidToken(m.Token.Reveal()) {
		return fmt.Errorf("%w: the bootstrap token is missing or malformed", ErrJoinData)
	}
	used, err := initConfigToken(d)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrJoinData, err)
	}
	if used.Reveal() != m.Token.Reveal() {
		return fmt.Errorf("%w: the bootstrap token differs from the one in %s, which kubeadm init used", ErrJoinData, InitConfigFile)
	}
	ca, err := d.Root().ReadFile(CACertFile)
	if err != nil {
		return fmt.Errorf("%w: reading the cluster CA: %w", ErrJoinData, err)
	}
	hash, err := kubeadm.CACertHash(ca)
	if err != nil || hash != m.Hash {
		return fmt.Errorf("%w: %s does not hash to the discovery hash about to be published", ErrJoinData, CACertFile)
	}
	if why := unusableAddress(m.Address); why != "" {
		return fmt.Errorf("%w: the master address %s is %s", ErrJoinData, m.Address, why)
	}
	if !ownsAddress(d.Node().Self, m.Address.String()) {
		return fmt.Errorf("%w: the master address %s is not one of this VM's NIC addresses in OneGate", ErrJoinData, m.Address)
	}
	return nil
}

// publishWorker reports the join done, then removes the join config: it
// holds the join token, which nothing needs once this node has joined
// (a deliberate re-bootstrap renders a new one).
func publishWorker(ctx context.Context, d Data) error {
	if err := publish(ctx, d, []onegate.KV{
		{Key: vmcontext.KeyPubNodeName, Value: d.Config().NodeName},
		{Key: vmcontext.KeyPubPhase, Value: PhaseDone},
		{Key: vmcontext.KeyReady, Value: "YES"},
	}); err != nil {
		return err
	}
	if err := d.Root().Remove(JoinConfigFile); err != nil {
		d.Log().Warn("removing the join config, which holds the join token, failed", "file", JoinConfigFile, "error", err)
	}
	return nil
}

// publish clears an error an earlier failed run left, then sends kvs,
// riding through OneGate failures. It records what it published, with the
// token masked.
func publish(ctx context.Context, d Data, kvs []onegate.KV) error {
	st := d.State()
	clearStaleError(ctx, d)
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

// clearStaleError erases the ONEGATE_K8S_ERROR an earlier failed run left
// (or the one this VM's discovered user template still shows), so a
// node reported done never carries a failure beside it.
func clearStaleError(ctx context.Context, d Data) {
	_, stale := d.Node().Self.UserTemplate[vmcontext.KeyPubError]
	if d.State().LastError == "" && !stale {
		return
	}
	// Best effort: the erase fails harmlessly when the key is gone.
	if err := EraseKeys(ctx, d.OneGate(), vmcontext.KeyPubError); err != nil {
		d.Log().Warn("clearing the previous error in OneGate failed", "error", err)
		return
	}
	delete(d.Node().Self.UserTemplate, vmcontext.KeyPubError)
}
