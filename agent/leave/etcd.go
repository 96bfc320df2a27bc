package leave

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/onekube/onekube/agent/etcdm"
)

// EtcdRemover removes the etcd members at a peer address, refusing with
// etcdm.ErrQuorum a removal after which the voting members left would
// have no healthy majority, or none would be left (etcdm.CheckRemoval);
// *etcdm.Client implements it.
type EtcdRemover interface {
	RemoveMember(ctx context.Context, peerIP netip.Addr) error
}

// etcdTimeout bounds the removal, which runs even after the drain used up
// the budget: a departed master's member left behind is one vote etcd
// can no longer get.
const (
	etcdTimeout = 20 * time.Second
	etcdRetry   = 2 * time.Second
)

// removeOwnMember is `kubeadm reset`'s remove-etcd-member phase
// (cmd/kubeadm/app/cmd/phases/reset/removeetcdmember.go →
// phases/etcd.RemoveStackedEtcdMemberFromCluster: remove the member at
// this node's peer URL, skip the cluster's only member) with one more
// rule: only when quorum survives the removal. kubeadm removes without
// looking; here a member whose removal would leave the others without a
// healthy majority stays, and the refusal is reported (the acting
// master's clean-up, or the operator, decides later). A member already
// gone is done.
func removeOwnMember(ctx context.Context, o Options, res *Result) {
	if !o.EtcdPeer.IsValid() {
		res.EtcdKept = "this master's etcd peer address is unknown"
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), etcdTimeout)
	defer cancel()
	var err error
	for {
		// etcd refuses a reconfiguration while a member it keeps has not
		// been connected for 5 s ("unhealthy cluster",
		// --strict-reconfig-check), and a slow member times out: try
		// again within the timeout; a quorum refusal is final.
		err = o.Etcd.RemoveMember(ctx, o.EtcdPeer)
		if err == nil || errors.Is(err, etcdm.ErrQuorum) || ctx.Err() != nil {
			break
		}
		o.Log.Info("etcd member removal failed; trying again", "error", err)
		select {
		case <-ctx.Done():
		case <-time.After(etcdRetry):
		}
	}
	switch {
	case err == nil:
		res.EtcdRemoved = true
		res.Left = "control-plane node: its etcd member removed; the acting master deletes the Node"
		o.Log.Info("etcd member removed before the VM goes", "peer", o.EtcdPeer)
	case errors.Is(err, etcdm.ErrQuorum):
		res.EtcdKept = err.Error()
		o.Log.Warn("etcd member kept: removing it would break quorum", "peer", o.EtcdPeer, "error", err)
	default:
		res.EtcdKept = "removing the etcd member failed: " + err.Error()
		o.Log.Warn("etcd member not removed", "peer", o.EtcdPeer, "error", err)
	}
}
