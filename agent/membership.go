package agent

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/onekube/onekube/agent/safetext"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// A VM's role is the role OneFlow's service document lists it in
// (roles[].nodes[]), never its USER_TEMPLATE ROLE_NAME: any VM of the
// service rewrites a sibling's ROLE_NAME past OneGate's restricted-attribute
// check with a leading tab (onegate-server.rb check_restricted_attrs; see
// shared/reference/onegate-trust.md), which would turn a worker into a
// would-be control plane and rename its node. The document is vouched for:
// OneGate serves GET /service only to a VM in it (check_vm_in_service).
// SERVICE_ID is a claim too: OneGate reads the caller's own SERVICE_ID to
// pick the service, so a rewritten one could point at another service of
// the same owner; the agent acts only in a service whose document carries
// that ID and lists this VM.

// readService is discovery's one read of the short service document,
// riding through transient OneGate failures.
func readService(ctx context.Context, d Data) (*onegate.Service, error) {
	var svc *onegate.Service
	w := oneGateWaiter(d, "reading the service from OneGate")
	err := w.run(ctx, func(ctx context.Context) error {
		var err error
		svc, err = d.OneGate().GetService(ctx)
		return err
	})
	return svc, err
}

// memberRole returns the role the service document lists vm in, after
// checking that the document is the service vm's SERVICE_ID claims.
func memberRole(svc *onegate.Service, vm *onegate.VM) (string, error) {
	claimed := vm.Claim(vmcontext.KeyServiceID)
	// Compared, never used: a claim that matches the vouched document is
	// only as good as the document.
	sid, err := strconv.Atoi(strings.TrimSpace(claimed.Unverified()))
	if err != nil {
		return "", fmt.Errorf("%w: VM %d has no valid %s in its user template (a VM OneFlow did not create, or one a sibling rewrote)",
			ErrNotInService, vm.ID, vmcontext.KeyServiceID)
	}
	if sid != svc.ID {
		return "", fmt.Errorf("%w: VM %d claims %s=%d but OneGate served service %d; acting in another service is refused",
			ErrNotInService, vm.ID, vmcontext.KeyServiceID, sid, svc.ID)
	}
	for _, r := range svc.Roles {
		for _, node := range r.Nodes {
			if node.VMID == vm.ID {
				return r.Name, nil
			}
		}
	}
	return "", fmt.Errorf("%w: service %d does not list VM %d in any role", ErrNotInService, svc.ID, vm.ID)
}

// noteRoleClaim logs a ROLE_NAME that disagrees with the service document:
// a sibling may have rewritten it, or a template made by hand. It is
// logged bounded and escaped, and used nowhere.
func noteRoleClaim(d Data, vm *onegate.VM, role string) {
	claimed := vm.Claim(vmcontext.KeyRoleName)
	// Display only: the value is shown, never acted on.
	if raw := claimed.Unverified(); raw != role {
		d.Log().Warn("this VM's ROLE_NAME disagrees with the service document; the service document wins",
			"role_name", safetext.Value(raw), "service_role", role)
	}
}

// keepRoleName keeps the role a previous run of kubeadm acted on: OneFlow
// never moves a VM between roles, so a different answer is not a reason
// to rename a node that exists or turn it into another kind.
func keepRoleName(d Data, role string) string {
	st := d.State()
	ran := st.Done(PhaseKubeadmInit) || st.Done(PhaseKubeadmJoin) ||
		st.WasAttempted(PhaseKubeadmInit) || st.WasAttempted(PhaseKubeadmJoin)
	if ran && st.RoleName != "" && st.RoleName != role && st.VMID == d.Node().VMID {
		d.Log().Warn("keeping the role of the previous run", "previous", st.RoleName, "discovered", role)
		return st.RoleName
	}
	return role
}
