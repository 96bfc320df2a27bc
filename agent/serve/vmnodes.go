package serve

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

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
// one request whatever the size), and which Nodes stand for them
// (listVMNodes and nodeVM: a provider ID that agrees with the Node's name,
// else for older Nodes their name and the onekube.io/vm-id label).

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

// vmNodes is one listing of the Nodes, read against the VMs.
type vmNodes struct {
	// byVM is each VM's Node (nodeVM's binding). Only this map feeds a
	// destructive act (cleanup), so it holds one Node per VM, and a
	// provider-ID match always wins.
	byVM map[int]corev1.Node
	// claimed lists, for each VM, every Node that may stand for it. A VM
	// with none has no Node; more entries can only withhold a join token.
	claimed map[int][]corev1.Node
}

// nodesByVM maps VM IDs to their Nodes (vmNodes.byVM).
func nodesByVM(ctx context.Context, cs kubernetes.Interface) (map[int]corev1.Node, error) {
	v, err := listVMNodes(ctx, cs)
	return v.byVM, err
}

// listVMNodes reads every Node once and maps it to its VM (nodeVM).
func listVMNodes(ctx context.Context, cs kubernetes.Interface) (vmNodes, error) {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return vmNodes{}, fmt.Errorf("listing nodes: %w", err)
	}
	v := vmNodes{byVM: map[int]corev1.Node{}, claimed: map[int][]corev1.Node{}}
	byProvider := map[int]bool{}
	for _, n := range list.Items {
		b := nodeVM(n)
		for _, id := range b.Claims {
			v.claimed[id] = append(v.claimed[id], n)
		}
		switch {
		case b.VM < 0:
		case b.ByProvider:
			v.byVM[b.VM] = n
			byProvider[b.VM] = true
		case !byProvider[b.VM]:
			if _, taken := v.byVM[b.VM]; !taken {
				v.byVM[b.VM] = n
			}
		}
	}
	return v, nil
}

// nodeBinding is what one Node says about its VM, and how far that can be
// believed.
type nodeBinding struct {
	// VM is the VM this Node stands for, -1 for none: the only VM an act
	// (a Node deleted, a VM powered off or terminated, a worker scaled
	// away) may be aimed at because of this Node.
	VM int
	// ByProvider: VM comes from a provider ID that agrees with the name.
	ByProvider bool
	// Claims lists every VM the Node may stand for; such a VM may only be
	// denied a token or the no-Node verdict because of it.
	Claims []int
}

// nodeVM binds a Node to a VM from what its kubelet could not have chosen
// freely. The name is bound to the node's credential (system:node:<name>,
// NodeRestriction) and is <prefix>-<VMID> (vmcontext.NodeName): serve's
// CSR approver signs no other name for a worker. spec.providerID
// ("one://<VMID>", kubeadm.ProviderID) is immutable once set, but free at
// creation: NodeRestriction's admitNode checks only the name, labels and
// configSource of a Node a kubelet creates (k8s.io/kubernetes
// plugin/pkg/admission/noderestriction/admission.go), and a kubelet may
// delete its own Node (onekube:node-self-removal, for leave). So root on
// worker-17 can recreate its Node with one://13; a provider ID counts
// unless the name ends with another VM's ID, and such a Node binds no VM
// and only withholds for both IDs. (A name without an ID is no worker's:
// the approver signs none, and a master's kubelet is trusted anyway.) A Node without a provider ID (registered before it) is
// bound by its name's ID, by its onekube.io/vm-id label only when the name
// has none (nodeVMFallback). Nodes of another provider, malformed ones of
// ours, and Nodes without either mark are not onekube's and bind nothing.
func nodeVM(n corev1.Node) nodeBinding {
	none := nodeBinding{VM: -1}
	if n.Spec.ProviderID == "" {
		id, ok := nodeVMFallback(n)
		if !ok {
			return none
		}
		return nodeBinding{VM: id, Claims: []int{id}}
	}
	pid, ours, err := kubeadm.ParseProviderID(n.Spec.ProviderID)
	if !ours || err != nil {
		return none
	}
	if nid, named := nameVMID(n.Name); named && nid != pid {
		return nodeBinding{VM: -1, Claims: []int{pid, nid}}
	}
	return nodeBinding{VM: pid, ByProvider: true, Claims: []int{pid}}
}

// nameVMID is the VM ID a Node's name ends with (<prefix>-<VMID>, in
// canonical decimal).
func nameVMID(name string) (int, bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return 0, false
	}
	s := name[i+1:]
	id, err := strconv.Atoi(s)
	if err != nil || id < 0 || strconv.Itoa(id) != s {
		return 0, false
	}
	return id, true
}

// nodeVMFallback is the VM of a Node registered without a provider ID: the
// ID its name ends with, for a Node that carries the onekube.io/vm-id
// label; the label's value only when the name ends with none. The label is
// the kubelet's to change at any time (NodeRestriction allows a node its
// own labels outside kubernetes.io and k8s.io), so it only marks the Node
// as onekube's.
func nodeVMFallback(n corev1.Node) (int, bool) {
	label, has := n.Labels[kubeadm.LabelVMID]
	if !has {
		return 0, false
	}
	if id, ok := nameVMID(n.Name); ok {
		return id, true
	}
	id, err := strconv.Atoi(label)
	if err != nil || id < 0 || strconv.Itoa(id) != label {
		return 0, false // a label no kubelet of ours wrote
	}
	return id, true
}

// joinWaitPhases are the phases an agent publishes from the moment it
// waits for the join data until its join is done.
var joinWaitPhases = []string{
	protocol.PhaseWaitMaster, protocol.PhaseRenderJoin, protocol.PhaseKubeadmJoin,
	protocol.PhaseWaitTurn, protocol.PhaseCertKeyRequest, protocol.PhaseWaitCertKey,
}

// whyNotWaiting says why a VM without a live Node is not expected to join,
// "" when it is. From GET /vms/:id.
//
// Only oned's word makes a VM expected: it runs (STATE ACTIVE, LCM_STATE
// RUNNING or later, not shutting down). What the VM publishes is a claim
// any VM of the service can write, so it can only withhold a token, never
// earn one: READY=YES (it joined once and will not join again by itself)
// or PHASE=failed (its agent stopped). A join phase lifts only the
// READY=YES veto, which an agent bootstrapping again leaves behind until
// its join clears it.
func whyNotWaiting(vm *onegate.VM) string {
	switch vm.State {
	case onegate.StateActive:
		switch vm.LCMState {
		case onegate.LCMShutdown, onegate.LCMShutdownPoweroff, onegate.LCMShutdownUndeploy, onegate.LCMEpilog:
			return fmt.Sprintf("shutting down (LCM_STATE %d)", vm.LCMState)
		}
		if !runStarted(vm) {
			return fmt.Sprintf("not running yet (LCM_STATE %d)", vm.LCMState)
		}
	case onegate.StatePending, onegate.StateHold:
		return fmt.Sprintf("not running yet (STATE %d)", vm.State)
	default:
		return fmt.Sprintf("not running (STATE %d)", vm.State)
	}
	// Claims: they can only withhold a token (say why a VM waits for
	// none), never mint one.
	ready := strings.EqualFold(strings.TrimSpace(vm.Claim(vmcontext.KeyReady).Unverified()), "YES")
	phase := strings.TrimSpace(vm.Claim(vmcontext.KeyPubPhase).Unverified()) // as READY above
	switch {
	case ready && !slices.Contains(joinWaitPhases, phase):
		return "READY=YES without a Node: it joined once and will not join again by itself"
	case phase == protocol.PhaseFailed:
		return "published PHASE=failed: its agent stopped and waits for no token"
	}
	return ""
}

// kubeletSilentFor: the Node's Ready condition has been Unknown for at
// least grace (the node controller sets it once the kubelet stops
// posting; only that kubelet or the controller write a Node's status).
func kubeletSilentFor(n corev1.Node, now time.Time, grace time.Duration) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionUnknown && now.Sub(c.LastTransitionTime.Time) >= grace
		}
	}
	return false
}

func sortedKeys[V any](m map[int]V) []int {
	ids := make([]int, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}
