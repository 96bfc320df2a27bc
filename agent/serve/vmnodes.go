package serve

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/kubeadm"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
	"github.com/onekube/onekube/context/protocol"
)

// The acting master's view of membership, shared by the tokens and
// cleanup loops: which VMs the service has (OneGate's short GET /service,
// one request whatever the size), and which Nodes carry their IDs (the
// onekube.io/vm-id label every kubelet registers with). Nodes without the
// label were not made by onekube and are never judged.

// serviceView is one read of the service.
type serviceView struct {
	State int
	// Roles maps each VM of the service to its role.
	Roles map[int]string
}

func readService(ctx context.Context, og gate.OneGate) (serviceView, error) {
	svc, err := og.GetService(ctx)
	if err != nil {
		return serviceView{}, fmt.Errorf("reading the service: %w", err)
	}
	v := serviceView{State: svc.State, Roles: map[int]string{}}
	for _, r := range svc.Roles {
		for _, n := range r.Nodes {
			v.Roles[n.VMID] = r.Name
		}
	}
	return v, nil
}

// growing: OneFlow is still creating VMs (DEPLOYING, or SCALING up), so a
// VM may appear at any moment and the join token is kept.
func (v serviceView) growing() bool {
	return v.State == onegate.ServiceDeploying || v.State == onegate.ServiceScaling
}

// nodesByVM maps VM IDs to their Nodes.
func nodesByVM(ctx context.Context, cs kubernetes.Interface) (map[int]corev1.Node, error) {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: kubeadm.LabelVMID})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	out := map[int]corev1.Node{}
	for _, n := range list.Items {
		id, err := strconv.Atoi(n.Labels[kubeadm.LabelVMID])
		if err != nil || id < 0 {
			continue // a label no kubelet of ours wrote
		}
		out[id] = n
	}
	return out, nil
}

// joinWaitPhases are the phases an agent publishes from the moment it
// waits for the join data until its join is done.
var joinWaitPhases = []string{
	protocol.PhaseWaitMaster, protocol.PhaseRenderJoin, protocol.PhaseKubeadmJoin,
	protocol.PhaseWaitTurn, protocol.PhaseCertKeyRequest, protocol.PhaseWaitCertKey,
}

// whyNotWaiting says why a VM without a live Node does not wait to join,
// "" when it does (booting, or waiting for the join data). From GET
// /vms/:id.
func whyNotWaiting(vm *onegate.VM) string {
	switch vm.State {
	case onegate.StateDone, onegate.StateStopped, onegate.StateSuspended, onegate.StatePoweroff, onegate.StateUndeployed:
		return fmt.Sprintf("not running (STATE %d)", vm.State)
	case onegate.StateActive:
		switch vm.LCMState {
		case onegate.LCMShutdown, onegate.LCMShutdownPoweroff, onegate.LCMShutdownUndeploy, onegate.LCMEpilog:
			return fmt.Sprintf("shutting down (LCM_STATE %d)", vm.LCMState)
		}
	}
	ut := vm.UserTemplate
	ready := strings.EqualFold(strings.TrimSpace(ut[vmcontext.KeyReady]), "YES")
	switch {
	case slices.Contains(joinWaitPhases, strings.TrimSpace(ut[vmcontext.KeyPubPhase])):
		// The agent runs again on a VM that joined once (kubeadm reset
		// and a restart, or a recreated disk): READY=YES is the earlier
		// boot's until its join clears it, and its phase is current.
		return ""
	case ready:
		return "READY=YES without a Node: it joined once and will not join again by itself"
	case strings.TrimSpace(ut[vmcontext.KeyPubPhase]) == protocol.PhaseFailed:
		return "published PHASE=failed: its agent stopped and waits for no token"
	}
	return ""
}

func sortedKeys[V any](m map[int]V) []int {
	ids := make([]int, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}
