package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/onekube/onekube/agent/kubeadm"
	vmcontext "github.com/onekube/onekube/context"
)

// Files whose presence means kubeadm set this node up (init or join). The
// agent resets a node only after its own recorded, unfinished attempt:
// anything else on this disk may be a running control plane.
var kubeadmFiles = []string{AdminConfFile, KubeletConfFile, APIServerManifest, CACertFile}

// preflight decides, before anything touches the node, whether this run
// may go on, from three witnesses: the agent's state (its record of what it
// did), the local disk (kubeadm's files), and what this VM published in
// OneGate (GET /vm, which outlives the disk: `onevm recover --recreate`
// keeps the VM ID and USER_TEMPLATE but not the disk). The cases, in order:
//
//  1. A recorded bootstrap whose files are gone: the operator ran kubeadm
//     reset to bootstrap again (README). Start over, clearing what was
//     published.
//  2. A recorded bootstrap or attempt with its files: resume; kubeadm-init
//     and kubeadm-join reset only after their own recorded attempt.
//  3. No record, kubeadm files present: adopt when they provably are this
//     VM's published bootstrap (the record alone was lost), else refuse.
//  4. No record, no files, but a cluster published (a recreated master):
//     with other masters READY, discovery made it a joining control plane,
//     which rejoins (the acting master removes its stale etcd member
//     first). The lone initialiser is refused unless the operator passed
//     --new-cluster. A recreated worker joins again: a join cannot fork a
//     cluster.
//  5. Nothing anywhere, on a disk that never ran the agent: the
//     initialiser checks oned's word that this is the service's first
//     deployment (firstdeploy.go), unless the operator passed
//     --new-cluster; everyone else goes on, a first boot.
func preflight(ctx context.Context, d Data) error {
	st, n := d.State(), d.Node()
	files, err := presentFiles(d)
	if err != nil {
		return err
	}
	recorded := !st.Empty()
	finished := st.Done(PhaseKubeadmInit) || st.Done(PhaseKubeadmJoin)
	switch {
	case recorded && finished && len(files) == 0:
		d.Log().Warn("kubeadm's files are gone since the last bootstrap (kubeadm reset?): bootstrapping again")
		st.Restart()
		st.VMID, st.Role = n.VMID, string(n.Kind)
		return d.SaveState()
	case recorded && st.WasAttempted(PhaseKubeadmJoin) && !st.Done(PhaseKubeadmJoin):
		return resetLeftoverJoin(ctx, d)
	case recorded:
		return nil
	case len(files) > 0:
		if ok, why := ownBootstrap(d); ok {
			d.Log().Warn("the agent's record is lost but this disk holds the bootstrap this VM published: adopting it, running nothing", "evidence", why)
			markAdopted(d)
			return d.SaveState()
		}
		return fmt.Errorf("%w: %s with no record of this agent running kubeadm; to set it up again run `kubeadm reset -f` "+
			"and restart onekube-bootstrap.service. A node may be running here, and the agent never resets what it did not start",
			ErrRefused, filesSummary(files))
	case n.Kind == KindInit && len(publishedCluster(n.Self)) > 0 && !d.NewCluster():
		return fmt.Errorf("%w: VM %d already published a cluster but this disk has no trace of it (onevm recover --recreate?); "+
			"if that cluster is gone run `onekube-agent bootstrap --new-cluster` (its workers must then be reset and rejoined). "+
			"Starting over silently would fork the cluster; published: %s",
			ErrRefused, n.VMID, strings.Join(publishedCluster(n.Self), ", "))
	case n.Kind == KindInit && d.FreshDisk() && !d.NewCluster():
		return checkFirstDeployment(ctx, d)
	}
	return nil
}

// resetLeftoverJoin undoes this agent's own unfinished join now, before
// the run waits for a token. The attempt's kubelet-start enabled the
// kubelet, which finishes its TLS bootstrap at the next boot and keeps its
// Node Ready; serve mints a token only for a VM with no live Node
// (serve/tokens.go), so waiting for one first never ends (the real bed's
// power cut mid-join showed it). The reset stops that kubelet; its Node
// goes silent and the VM counts as waiting again.
func resetLeftoverJoin(ctx context.Context, d Data) error {
	if err := resetIfOwnAttempt(ctx, d, PhaseKubeadmJoin); err != nil {
		return err
	}
	d.State().ClearAttempt(PhaseKubeadmJoin)
	return d.SaveState()
}

// filesSummary names the first file found and counts the others, short
// enough for a 240-character report.
func filesSummary(files []string) string {
	if len(files) == 1 {
		return files[0] + " exists"
	}
	return fmt.Sprintf("%s and %d more kubeadm files exist", files[0], len(files)-1)
}

// presentFiles lists kubeadm's files found on this disk.
func presentFiles(d Data) ([]string, error) {
	var out []string
	for _, f := range kubeadmFiles {
		ok, err := d.Root().Exists(f)
		if err != nil {
			return nil, fmt.Errorf("checking %s: %w", f, err)
		}
		if ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// ownBootstrap reports whether the kubeadm files on this disk are the
// bootstrap this VM published: for a master (init or joined), READY=YES with the hash of
// the CA on this disk and one of this VM's addresses; for a worker,
// READY=YES with this node's name and the kubelet's kubeconfig present.
func ownBootstrap(d Data) (bool, string) {
	n, cfg := d.Node(), d.Config()
	ut := n.Self.UserTemplate
	if !isReady(n.Self) {
		return false, ""
	}
	switch n.Kind {
	case KindInit, KindControlPlane:
		ca, err := d.Root().ReadFile(CACertFile)
		if err != nil {
			return false, ""
		}
		hash, err := kubeadm.CACertHash(ca)
		pub, perr := kubeadm.ParseHash(ut[vmcontext.KeyPubHash])
		if err != nil || perr != nil || hash != pub || !ownsAddress(n.Self, ut[vmcontext.KeyPubMaster]) {
			return false, ""
		}
		if ok, _ := d.Root().Exists(AdminConfFile); !ok {
			return false, ""
		}
		return true, "READY=YES, " + vmcontext.KeyPubHash + " matches " + CACertFile
	case KindWorker:
		if ut[vmcontext.KeyPubNodeName] != cfg.NodeName {
			return false, ""
		}
		if ok, _ := d.Root().Exists(KubeletConfFile); !ok {
			return false, ""
		}
		return true, "READY=YES, " + vmcontext.KeyPubNodeName + "=" + cfg.NodeName + ", " + KubeletConfFile
	}
	return false, ""
}

// markAdopted records the bootstrap as done without running it.
func markAdopted(d Data) {
	st, n := d.State(), d.Node()
	n.Adopted = true
	done := []string{PhaseKubeadmJoin}
	if n.Kind == KindInit {
		done = []string{PhaseKubeadmInit}
	}
	for _, p := range done {
		st.MarkDone(p)
	}
	st.LastError = ""
}
