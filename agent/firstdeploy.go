package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/onekube/onekube/context/onegate"
)

// firstBootWindow bounds how long after its creation a master boots for
// the first time: scheduling, the image's copy and the boot take minutes.
// A master that has never run the agent on this disk yet was created
// longer ago is a recreated one (docs/agent-safety.md, "A new cluster is
// the owner's word"). Workers of a first deployment stop waiting after
// --master-timeout (30 m), so a later first init would be late for them
// anyway; the hour leaves room for a VM clock off by some minutes.
const firstBootWindow = time.Hour

// checkFirstDeployment is the initialising master's last look before a
// `kubeadm init` on a disk that has never run the agent. Published keys
// cannot say whether the service already had a cluster: a recreate keeps
// them, a sibling may erase them. oned's creation time (STIME, which
// `onevm recover --recreate` keeps: src/vm/VirtualMachine.cc sets it only
// at allocation) can: it reads the extended service document once, the
// only OneGate answer that carries it, and refuses when this VM is older
// than firstBootWindow.
func checkFirstDeployment(ctx context.Context, d Data) error {
	n := d.Node()
	var svc *onegate.Service
	w := oneGateWaiter(d, "reading the service's VMs from OneGate")
	if err := w.run(ctx, func(ctx context.Context) error {
		var err error
		svc, err = d.OneGate().GetServiceExtended(ctx)
		return err
	}); err != nil {
		return fmt.Errorf("checking this is the service's first deployment: %w", err)
	}
	var self *onegate.VM
	for _, r := range svc.Roles {
		for _, node := range r.Nodes {
			if node.VMID == n.VMID && node.VM != nil {
				self = node.VM
			}
		}
	}
	if self == nil || self.STime <= 0 {
		// Servers before 5.12 have no extended document; their service
		// lists no STIME. Nothing says otherwise: a first deployment.
		d.Log().Warn("OneGate does not show when this VM was created; cannot tell a recreated master from a first deployment")
		return siblingsHadCluster(svc, n.VMID)
	}
	age := d.Clock().Now().Sub(time.Unix(self.STime, 0))
	if age <= firstBootWindow {
		return siblingsHadCluster(svc, n.VMID)
	}
	// Short: the 240-character report must keep the way out.
	return fmt.Errorf("%w: VM %d was created %s ago, this disk never ran the agent (onevm recover --recreate?); "+
		"if its cluster is gone run `onekube-agent bootstrap --new-cluster`",
		ErrRefused, n.VMID, age.Round(time.Minute))
}

// siblingsHadCluster refuses when another VM of the service published a
// cluster (the master keys, or READY=YES): in a first deployment no VM
// does before the first master's init, since workers and other masters
// join it first, and onekube renders no other role. The keys are claims
// any sibling can write, so a forged one can only cause this refusal, never
// an init. It closes the first hour STIME leaves open, unless an attacker
// also erased every sibling's keys: then every master was recreated within
// an hour of its creation and its keys erased, which is a denial of service
// (the old cluster's data is on the old disks, not deleted), within what a
// sibling can do anyway (docs/agent-safety.md).
func siblingsHadCluster(svc *onegate.Service, self int) error {
	for _, r := range svc.Roles {
		for _, node := range r.Nodes {
			if node.VMID == self || node.VM == nil {
				continue
			}
			if keys := publishedCluster(node.VM); len(keys) > 0 {
				// Short: the 240-character report must keep the way out.
				return fmt.Errorf("%w: VM %d (%s) published %s but this disk never ran the agent (all masters recreated?); "+
					"if its cluster is gone run `onekube-agent bootstrap --new-cluster`",
					ErrRefused, node.VMID, r.Name, keys[0])
			}
		}
	}
	return nil
}
