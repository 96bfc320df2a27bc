package agent

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// How long a join waits for kubeadm to stop refusing this node's own name,
// and how often it tries again. The node lifecycle controller marks a
// Node whose kubelet went quiet NotReady after node-monitor-grace-period,
// 50 s by default in 1.36 and 1.37 (pkg/controller/nodelifecycle/config/v1alpha1/
// defaults.go), checked every node-monitor-period (5 s); the bound leaves
// room for that and a slow API server.
const (
	staleNodeWait  = 2 * time.Minute
	staleNodeRetry = 5 * time.Second
)

// joinPastStaleNode runs kubeadm join and, while kubeadm refuses it
// because a Ready Node already has this node's name, waits, undoes the
// refused attempt with kubeadm reset -f and joins again, for up to
// staleNodeWait.
//
// The name is this VM's own by construction: <prefix>-<VMID>, and oned
// never gives a VM ID out twice, so only a VM that chose this name by hand
// could hold it. (Checking every VM's published name before joining cost
// a read of the extended service document, O(N) per worker: issue 14.)
// So that Node is this VM's earlier registration: a kubelet stopped by `kubeadm reset`
// (the documented re-bootstrap) or lost with the old disk (`onevm recover
// --recreate`). kubeadm's kubelet-start refuses the join while that Node
// is still Ready (cmd/kubeadm/app/cmd/phases/join/kubelet.go), which it is
// for up to the grace period after its kubelet stopped; without waiting,
// the README's re-bootstrap of a worker fails on a real cluster. If a
// kubelet still runs under this name (the old VM alive after all), the
// Node stays Ready and the join still fails with kubeadm's reason.
func joinPastStaleNode(ctx context.Context, d Data) error {
	join := func() error {
		return d.Kubeadm().Join(ctx, d.Root().Path(JoinConfigFile), d.Master().Token, d.Master().CertificateKey)
	}
	name := d.Config().NodeName
	deadline := d.Clock().Now().Add(staleNodeWait)
	err := join()
	for err != nil && staleOwnNode(err, name) {
		if !d.Clock().Now().Before(deadline) {
			return fmt.Errorf("the Node %q stayed Ready for %s: a kubelet still runs under this VM's node name, "+
				"or the cluster's node-monitor-grace-period is longer; %w", name, staleNodeWait, err)
		}
		// Counted as waiting by serve, which keeps the token meanwhile.
		d.ReportWaiting(ctx)
		d.Log().Warn("kubeadm refused the join: the Node of this name is still Ready. It is this VM's earlier registration, "+
			"whose kubelet stopped; the node controller marks it NotReady within node-monitor-grace-period (50 s). Waiting, then joining again",
			"node", name, "retry_in", staleNodeRetry)
		if serr := d.Clock().Sleep(ctx, staleNodeRetry); serr != nil {
			return err
		}
		// kubelet-start wrote the CA and bootstrap-kubelet.conf before
		// its check, and the next join's preflight refuses both.
		if rerr := d.Kubeadm().Reset(ctx); rerr != nil {
			return fmt.Errorf("resetting the refused join: %w", rerr)
		}
		err = join()
	}
	return err
}

// staleOwnNode reports whether err is kubeadm's refusal to join under
// name because a Node of that name is Ready (its words, kubelet.go).
func staleOwnNode(err error, name string) bool {
	return strings.Contains(err.Error(), fmt.Sprintf("a Node with name %q and status %q already exists in the cluster", name, "Ready"))
}
