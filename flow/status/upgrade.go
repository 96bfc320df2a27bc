package status

import (
	"fmt"
	"strings"

	vmcontext "github.com/onekube/onekube/context"
)

// UpgradeInfo is what a VM published about an in-place upgrade
// (docs/upgrades.md). Display only: the plan and the grants live in the
// cluster, and a sibling VM can rewrite any of these.
type UpgradeInfo struct {
	Node      string // ONEGATE_K8S_NODE_UPGRADE: "<version> <step>" of this node
	NodeError string // ONEGATE_K8S_NODE_UPGRADE_ERROR
	// Rollout and RolloutError are the acting master's view of the whole.
	Rollout      string // ONEGATE_K8S_UPGRADE
	RolloutError string // ONEGATE_K8S_UPGRADE_ERROR: why it stopped
}

func readUpgrade(get func(string) string) UpgradeInfo {
	return UpgradeInfo{
		Node:         get(vmcontext.KeyPubNodeUpgrade),
		NodeError:    get(vmcontext.KeyPubNodeUpgradeError),
		Rollout:      get(vmcontext.KeyPubUpgrade),
		RolloutError: get(vmcontext.KeyPubUpgradeError),
	}
}

// upgradeReasons adds a running upgrade to the outcome: in progress until
// the acting master says done, failed when it stopped. Only acting
// masters count: a standby keeps whatever it published when it acted.
func upgradeReasons(rows []Row) (failed, pending []string) {
	for _, r := range rows {
		u := r.Upgrade
		if r.Living.Serve != "acting" || u.Rollout == "" {
			continue
		}
		switch {
		case u.RolloutError != "":
			failed = append(failed, fmt.Sprintf("upgrade stopped (VM %d): %s", r.ID, u.RolloutError))
		case !strings.HasSuffix(u.Rollout, " done"):
			pending = append(pending, "upgrade "+u.Rollout)
		}
	}
	return failed, pending
}

// writeUpgrade is the table's upgrade block: the rollout, then each
// node's step; nothing when no VM published any.
func writeUpgrade(b *strings.Builder, r Report) {
	seen := false
	for _, v := range r.VMs {
		if v.Upgrade != (UpgradeInfo{}) {
			seen = true
		}
	}
	if !seen {
		return
	}
	for _, v := range r.VMs {
		if v.Living.Serve == "acting" && v.Upgrade.Rollout != "" {
			fmt.Fprintf(b, "upgrade: %s\n", cell(v.Upgrade.Rollout))
			if v.Upgrade.RolloutError != "" {
				fmt.Fprintf(b, "  UPGRADE STOPPED: %s\n", truncate(cell(v.Upgrade.RolloutError), 2*maxError))
			}
		}
	}
	for _, v := range r.VMs {
		if v.Upgrade.Node == "" {
			continue
		}
		line := fmt.Sprintf("  VM %d %s: %s", v.ID, cell(v.NodeName), cell(v.Upgrade.Node))
		if v.Upgrade.NodeError != "" {
			line += ": " + truncate(cell(v.Upgrade.NodeError), maxError)
		}
		fmt.Fprintln(b, line)
	}
}
