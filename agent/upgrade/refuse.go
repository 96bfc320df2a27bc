package upgrade

import (
	"fmt"

	"github.com/onekube/onekube/agent/kversion"
	"github.com/onekube/onekube/context/onegate"
)

// Refusal is a reason not to start, or not to go on with, an upgrade. Its
// text names the reason; status and the CLI print it as it is.
type Refusal struct {
	Code   string // skipped-minor, downgrade, not-in-bundle, bundle-state, vm-state, service-state, etcd, drain-blocked, node-failed
	Detail string
}

func (r *Refusal) Error() string { return "upgrade refused (" + r.Code + "): " + r.Detail }

func refuse(code, format string, a ...any) *Refusal {
	return &Refusal{Code: code, Detail: fmt.Sprintf(format, a...)}
}

// NodeVersion is one Node's kubelet version (status.nodeInfo.kubeletVersion).
type NodeVersion struct {
	Name         string
	ControlPlane bool
	Version      kversion.Version
}

// CheckVersions applies kubeadm's rules to a target and the cluster's
// nodes: same major, no node newer than the target (no downgrades), and
// no node more than one minor behind it ("Skipping MINOR versions when
// upgrading is unsupported", kubeadm-upgrade docs; kubeadm's
// cmd/kubeadm/app/phases/upgrade/policy.go refuses it for the control
// plane). Workers get the same rule as control planes: a kubelet may lag
// by three minors, but each upgrade still moves it one minor at a time.
func CheckVersions(target kversion.Version, nodes []NodeVersion) error {
	if len(nodes) == 0 {
		return refuse("no-nodes", "the cluster lists no Nodes")
	}
	for _, n := range nodes {
		v := n.Version
		switch {
		case v.Major != target.Major:
			return refuse("skipped-minor", "node %s runs %s and the target is %s: a major version change is not an upgrade onekube makes", n.Name, v, target)
		case v.Compare(target) > 0:
			return refuse("downgrade", "node %s runs %s, newer than the target %s: kubeadm does not downgrade", n.Name, v, target)
		case target.Minor > v.Minor+1:
			return refuse("skipped-minor", "node %s runs %s; %s would skip v%d.%d (kubeadm upgrades one minor at a time)", n.Name, v, target, target.Major, v.Minor+1)
		}
	}
	return nil
}

// CheckBundle refuses a bundle that carries another release than the target.
func CheckBundle(target, bundle kversion.Version) error {
	if bundle != target {
		return refuse("not-in-bundle", "the bundle carries %s, not the target %s", bundle, target)
	}
	return nil
}

// VMState is a VM as oned reports it through OneGate (vouched).
type VMState struct {
	ID, State, LCMState int
}

// CheckStates refuses unless the service and every VM of it are RUNNING:
// a VM in any other state may be mid-operation (and OneFlow holds its
// service in WARNING), and an upgrade should not stack on top of it.
func CheckStates(serviceState int, vms []VMState) error {
	if serviceState != onegate.ServiceRunning {
		return refuse("service-state", "the service is in state %d, not RUNNING (2)", serviceState)
	}
	for _, vm := range vms {
		if vm.State != onegate.StateActive || vm.LCMState != onegate.LCMRunning {
			return refuse("vm-state", "VM %d is not RUNNING (state %d, lcm state %d)", vm.ID, vm.State, vm.LCMState)
		}
	}
	return nil
}

// CheckEtcd refuses unless every etcd member is healthy: a control-plane
// step restarts one member, and only a fully healthy cluster keeps its
// quorum through that (3 members tolerate 1 down, not 2).
func CheckEtcd(members, healthy int) error {
	switch {
	case members == 0:
		return refuse("etcd", "no etcd member answered")
	case healthy < members:
		return refuse("etcd", "%d of %d etcd members are healthy; restarting one more could lose quorum", healthy, members)
	}
	return nil
}

// BatchSize is how many workers go at once: the plan's request, at least
// one, and never more than half the workers, so that at least half keep
// serving while the others drain.
func BatchSize(workers, requested int) int {
	limit := workers / 2
	if limit < 1 {
		limit = 1
	}
	switch {
	case requested < 1:
		return 1
	case requested > limit:
		return limit
	}
	return requested
}
