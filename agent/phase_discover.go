package agent

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/onekube/onekube/agent/state"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// discoverPhase resolves the context settings, then asks OneGate who this
// VM is (GET /vm) and who the masters are (GET /service, once), and decides
// the node's kind. resolve is the context half, kept out of Data so phases
// never see raw context variables.
func discoverPhase(resolve func() (Config, error)) func(context.Context, Data) error {
	return func(ctx context.Context, d Data) error {
		cfg, err := resolve()
		if err != nil {
			return fmt.Errorf("reading settings: %w", err)
		}
		*d.Config() = cfg

		vm, err := getVM(ctx, d)
		if err != nil {
			return err
		}
		n := d.Node()
		n.VMID = vm.ID
		n.RoleName = vm.UserTemplate[vmcontext.KeyRoleName]
		sid := vm.UserTemplate[vmcontext.KeyServiceID]
		if n.RoleName == "" || sid == "" {
			return fmt.Errorf("%w: VM %d has no %s or %s in its user template", ErrNotInService, vm.ID, vmcontext.KeyRoleName, vmcontext.KeyServiceID)
		}
		if n.ServiceID, err = strconv.Atoi(sid); err != nil {
			return fmt.Errorf("%w: VM %d has a malformed %s", ErrNotInService, vm.ID, vmcontext.KeyServiceID)
		}

		if n.MasterIDs, err = masterIDs(ctx, d, cfg.MasterRole); err != nil {
			return err
		}
		n.Kind = kindOf(n.VMID, n.RoleName, cfg.MasterRole, n.MasterIDs)
		return adoptState(d)
	}
}

// kindOf decides what a VM does: the master role's lowest VM ID initializes
// the cluster, other master-role VMs would join the control plane, every
// other role joins as a worker.
func kindOf(vmid int, role, masterRole string, masters []int) Kind {
	if role != masterRole {
		return KindWorker
	}
	if len(masters) > 0 && vmid == masters[0] {
		return KindInit
	}
	return KindControlPlane
}

// adoptState checks the saved state belongs to this VM and keeps the kind a
// previous run acted on: once kubeadm ran, a changed master set (a scaled
// down role) must not turn a joined worker into a second cluster.
func adoptState(d Data) error {
	st, n := d.State(), d.Node()
	if st.VMID != 0 && st.VMID != n.VMID {
		return fmt.Errorf("state file %s belongs to VM %d, this is VM %d (was the disk cloned after a bootstrap?)", state.StateFile, st.VMID, n.VMID)
	}
	if st.Role != "" && Kind(st.Role) != n.Kind && (st.Done(PhaseKubeadmInit) || st.Done(PhaseKubeadmJoin)) {
		d.Log().Warn("keeping the role of the previous run", "previous", st.Role, "discovered", string(n.Kind))
		n.Kind = Kind(st.Role)
	}
	st.VMID, st.Role = n.VMID, string(n.Kind)
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

// masterIDs reads the service once (retrying only failures) and returns the
// master role's VM IDs, lowest first. The short service document carries
// only IDs, which is all this needs; it is never polled, because its size
// grows with the cluster.
func masterIDs(ctx context.Context, d Data, masterRole string) ([]int, error) {
	var ids []int
	w := oneGateWaiter(d, "reading the service from OneGate")
	err := w.run(ctx, func(ctx context.Context) error {
		svc, err := d.OneGate().GetService(ctx)
		if err != nil {
			return err
		}
		role := svc.Role(masterRole)
		if role == nil {
			return fmt.Errorf("service %d has no role %q (set %s to the master role's name)", svc.ID, masterRole, vmcontext.KeyMasterRole)
		}
		ids = ids[:0]
		for _, node := range role.Nodes {
			ids = append(ids, node.VMID)
		}
		if len(ids) == 0 {
			// OneFlow fills a role as it creates VMs: a moment's patience.
			return Retryable(fmt.Errorf("master role %q has no VMs yet", masterRole))
		}
		return nil
	})
	slices.Sort(ids)
	return ids, err
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
