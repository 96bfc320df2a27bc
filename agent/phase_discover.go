package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/state"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// discoverPhase asks OneGate who this VM is (GET /vm) and which role it
// is in (GET /service: OneFlow's roles[].nodes[], never the ROLE_NAME any
// sibling can rewrite; membership.go), resolves the context settings
// against this VM's NICs and identity, checks the image's kubeadm is the
// release asked for, and decides the node's kind. resolve is the context
// half, kept out of Data so phases never see raw context variables.
func discoverPhase(resolve func(*onegate.VM, string) (Config, error)) func(context.Context, Data) error {
	return func(ctx context.Context, d Data) error {
		vm, err := getVM(ctx, d)
		if err != nil {
			return err
		}
		if vm.ID != d.SelfID() {
			// The client checks this too; a second look costs nothing.
			return fmt.Errorf("OneGate's GET /vm describes VM %d, but this is VM %d (VMID in the context)", vm.ID, d.SelfID())
		}
		n := d.Node()
		n.Self, n.VMID = vm, vm.ID
		// The one read of the short service document every VM makes:
		// a straight worker's confirms its master hint with it too.
		svc, err := readService(ctx, d)
		if err != nil {
			return err
		}
		role, err := memberRole(svc, vm)
		if err != nil {
			return err
		}
		noteRoleClaim(d, vm, role)
		n.RoleName, n.ServiceID = keepRoleName(d, role), svc.ID

		cfg, err := resolve(vm, n.RoleName)
		if err != nil {
			return fmt.Errorf("reading settings: %w", err)
		}
		*d.Config() = cfg
		if err := checkKubeadmVersion(ctx, d); err != nil {
			return err
		}

		if n.RoleMasters, err = roleIDs(svc, cfg.MasterRole); IsRetryable(err) {
			// OneFlow fills a role as it creates VMs: read again.
			n.RoleMasters, err = masterIDs(ctx, d, cfg.MasterRole)
		}
		if err != nil {
			return err
		}
		n.MasterIDs = n.RoleMasters
		if n.RoleName != cfg.MasterRole && cfg.MasterVMID != nil {
			// A straight deployment's worker: OneFlow named the master
			// at creation; it is followed if the master role lists it.
			n.MasterIDs, n.MasterHint = confirmHint(d, *cfg.MasterVMID, n.RoleMasters)
		}
		if n.RoleName == cfg.MasterRole {
			if n.Masters, err = readMasters(ctx, d, n.MasterIDs); err != nil {
				return err
			}
		}
		n.Kind = kindOf(n.VMID, n.RoleName, cfg.MasterRole, n.MasterIDs, n.Masters)
		return adoptState(d)
	}
}

// checkKubeadmVersion reads the image's kubeadm release and refuses a
// template that asks for another: the image carries one release (its
// kubeadm, kubelet and preloaded images), and nothing else can run offline.
func checkKubeadmVersion(ctx context.Context, d Data) error {
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	v, err := d.Kubeadm().Version(ctx)
	if err != nil {
		return fmt.Errorf("finding the image's Kubernetes version: %w", err)
	}
	d.Node().KubeadmVersion = v
	if want := d.Config().Version; want != "" && want != v {
		return fmt.Errorf("%w: %s asks for %s, but this image's kubeadm is %s; leave %s empty, or use an appliance built for %s",
			ErrVersion, vmcontext.KeyVersion, want, v, vmcontext.KeyVersion, want)
	}
	return nil
}

// kindOf decides what a VM does. Every other role joins as a worker. A
// master joins the control plane as soon as another master VM published a
// cluster (READY with a CA hash): that covers reruns, scale-ups and a
// recreated initialiser, whose fresh disk must rejoin rather than fork the
// cluster. Otherwise the role's lowest VM ID initialises: OneFlow creates
// every master at once, in any boot order, and the ID list is the one fact
// they all read the same (GET /service).
func kindOf(vmid int, role, masterRole string, masters []int, others map[int]*onegate.VM) Kind {
	if role != masterRole {
		return KindWorker
	}
	for id, vm := range others {
		if id != vmid && publishedHash(vm) != "" {
			return KindControlPlane
		}
	}
	if len(masters) > 0 && vmid == masters[0] {
		return KindInit
	}
	return KindControlPlane
}

// publishedHash is the CA hash of a master that is READY with one, "" for
// any other.
func publishedHash(vm *onegate.VM) string {
	if vm == nil || !isReady(vm) {
		return ""
	}
	// The CA pin is a claim (docs/trust.md lists ONEGATE_K8S_HASH as
	// open): it is only ever compared or used to pin a join, never sent.
	h, err := kubeadm.ParseHash(vm.Claim(vmcontext.KeyPubHash).Unverified())
	if err != nil {
		return ""
	}
	return h
}

// readMasters reads every other master VM once (GET /vms/:id), riding
// through OneGate failures; a VM OneGate no longer knows is left out.
func readMasters(ctx context.Context, d Data, ids []int) (map[int]*onegate.VM, error) {
	out := map[int]*onegate.VM{}
	for _, id := range ids {
		if id == d.Node().VMID {
			continue
		}
		var vm *onegate.VM
		w := oneGateWaiter(d, fmt.Sprintf("reading master VM %d from OneGate", id))
		err := w.run(ctx, func(ctx context.Context) error {
			var err error
			vm, err = d.OneGate().GetVMByID(ctx, id)
			return err
		})
		switch {
		case errors.Is(err, ErrUnauthorized):
			return nil, err
		case err != nil:
			d.Log().Warn("could not read a master VM; going on without it", "vmid", id, "error", err)
			continue
		}
		out[id] = vm
	}
	return out, nil
}

// adoptState checks the saved state belongs to this VM and keeps the kind a
// previous run acted on: once kubeadm ran, a changed master set (a scaled
// down role) must not turn a joined worker into a second cluster.
func adoptState(d Data) error {
	st, n := d.State(), d.Node()
	if st.VMID != 0 && st.VMID != n.VMID {
		return fmt.Errorf("%w: state file %s belongs to VM %d, this is VM %d (was the disk cloned after a bootstrap?)", ErrRefused, state.StateFile, st.VMID, n.VMID)
	}
	if st.Role != "" && Kind(st.Role) != n.Kind && (st.Done(PhaseKubeadmInit) || st.Done(PhaseKubeadmJoin)) {
		d.Log().Warn("keeping the role of the previous run", "previous", st.Role, "discovered", string(n.Kind))
		n.Kind = Kind(st.Role)
	}
	st.VMID, st.Role, st.RoleName = n.VMID, string(n.Kind), n.RoleName
	return nil
}

// getVM reads this VM, riding through transient OneGate failures.
func getVM(ctx context.Context, d Data) (*onegate.VM, error) {
	var vm *onegate.VM
	w := oneGateWaiter(d, "reading this VM from OneGate")
	err := w.run(ctx, func(ctx context.Context) error {
		var err error
		vm, err = d.OneGate().GetVM(ctx)
		return err
	})
	return vm, err
}

// masterIDs reads the service (retrying only failures) and returns the
// master role's VM IDs, lowest first. The short service document carries
// only IDs, which is all this needs; a worker re-reads it only on a long
// wait, because its size grows with the cluster.
func masterIDs(ctx context.Context, d Data, masterRole string) ([]int, error) {
	var ids []int
	w := oneGateWaiter(d, "reading the service from OneGate")
	err := w.run(ctx, func(ctx context.Context) error {
		var err error
		ids, err = readMasterIDs(ctx, d, masterRole)
		return err
	})
	return ids, err
}

// readMasterIDs is one read of the master role's VM IDs, lowest first.
func readMasterIDs(ctx context.Context, d Data, masterRole string) ([]int, error) {
	svc, err := d.OneGate().GetService(ctx)
	if err != nil {
		return nil, err
	}
	return roleIDs(svc, masterRole)
}

// roleIDs returns the master role's VM IDs in svc, lowest first; none yet
// is retryable.
func roleIDs(svc *onegate.Service, masterRole string) ([]int, error) {
	role := svc.Role(masterRole)
	if role == nil {
		return nil, fmt.Errorf("service %d has no role %q (set %s to the master role's name)", svc.ID, masterRole, vmcontext.KeyMasterRole)
	}
	var ids []int
	for _, node := range role.Nodes {
		ids = append(ids, node.VMID)
	}
	if len(ids) == 0 {
		// OneFlow fills a role as it creates VMs: a moment's patience.
		return nil, Retryable(fmt.Errorf("master role %q has no VMs yet", masterRole))
	}
	slices.Sort(ids)
	return ids, nil
}

// oneGateWaiter rides through transient OneGate failures for the
// OneGate timeout.
func oneGateWaiter(d Data, what string) *waiter {
	t := d.Settings()
	return &waiter{
		what:    what,
		timeout: t.OneGateTimeout,
		initial: t.PollInterval,
		max:     t.MaxPollInterval,
		clock:   d.Clock(),
		log:     d.Log(),
	}
}
