package serve

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/onekube/onekube/context/onegate"
)

// member is one VM of the service as remediation judges it. Every field
// comes from something no sibling VM can write: the role from the
// service document's roles[].nodes, the states from oned (STATE,
// LCM_STATE), the Node by its spec.providerID (set by the kubelet that
// registered with the VM's credential, immutable after). No USER_TEMPLATE
// key is read.
type member struct {
	VMID   int
	Role   string
	Master bool
	State  int
	LCM    int
	// Node is the Node whose spec.providerID is one://<VMID>; nil if none.
	Node *corev1.Node
	// Claimed: some Node may stand for the VM (a provider ID, or an older
	// Node's name and label). It can only withhold the no-Node verdict.
	Claimed bool
	// NoNodeSince is when serve first saw the VM running without a Node
	// (zero: not counting).
	NoNodeSince time.Time
}

// health is the verdict on one member.
type health struct {
	// Reason is why the member is unhealthy, "" when it is not.
	Reason string
	// Trouble is the VM state OneFlow calls a warning (onegate.Trouble),
	// Failed when it is a *_FAILURE.
	Trouble string
	Failed  bool
}

func (h health) unhealthy() bool { return h.Reason != "" }

// judge applies the three tests of issue 22: OneGate shows the VM
// POWEROFF, UNKNOWN or failed; its Node's Ready has been False or
// Unknown for UnhealthyAfter; it has run StartupTimeout without a Node.
// A VM on its way out (shutting down) or not run by oned yet is not
// judged.
func judge(m member, now time.Time, cfg RemediateConfig) health {
	if t, failed := onegate.Trouble(m.State, m.LCM); t != "" {
		return health{Reason: "VM is " + t, Trouble: t, Failed: failed}
	}
	if m.State != onegate.StateActive {
		return health{} // PENDING, HOLD, STOPPED, SUSPENDED, UNDEPLOYED: the owner's doing
	}
	switch m.LCM {
	case onegate.LCMShutdown, onegate.LCMShutdownPoweroff, onegate.LCMShutdownUndeploy, onegate.LCMEpilog:
		return health{} // leaving: someone acts on it already
	}
	if m.Node != nil {
		return health{Reason: nodeUnhealthy(*m.Node, now, cfg)}
	}
	if m.Claimed || m.NoNodeSince.IsZero() {
		return health{}
	}
	if waited := now.Sub(m.NoNodeSince); waited >= cfg.StartupTimeout {
		return health{Reason: fmt.Sprintf("no Node %s after the VM ran", waited.Round(time.Second))}
	}
	return health{}
}

// nodeUnhealthy: Ready False or Unknown since at least UnhealthyAfter
// (the condition's lastTransitionTime, kept by the kubelet and the node
// lifecycle controller); a Node with no Ready condition yet counts from
// its creation, against StartupTimeout.
func nodeUnhealthy(n corev1.Node, now time.Time, cfg RemediateConfig) string {
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			return ""
		}
		if d := now.Sub(c.LastTransitionTime.Time); d >= cfg.UnhealthyAfter {
			return fmt.Sprintf("Node %s Ready=%s for %s", n.Name, c.Status, d.Round(time.Second))
		}
		return ""
	}
	if d := now.Sub(n.CreationTimestamp.Time); d >= cfg.StartupTimeout {
		return fmt.Sprintf("Node %s has reported no Ready condition in %s", n.Name, d.Round(time.Second))
	}
	return ""
}
