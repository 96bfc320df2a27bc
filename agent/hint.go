package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/onekube/onekube/context/onegate"
)

// The master the context names (ONEKUBE_MASTER_VM_ID) spares a straight
// worker the wait for OneFlow's list of masters, but it is a CONTEXT value:
// a template edited by hand, or one left from another service, can name any
// VM. A worker therefore acts on that VM's word (joins it, stops on its
// failure, waits on it) only once OneFlow's service document lists it in
// the master role. Role membership is taken from GET /service
// (roles[].nodes[], which OneFlow keeps), never from the VM's own
// USER_TEMPLATE ROLE_NAME, which any VM of the service can rewrite
// (onegate-server.rb: check_restricted_attrs compares only the first
// '='-separated word of each line; see onegate-trust.md).

// leansOnHint reports whether this look would act on what the named master
// published: join it (ready with join data), stop on its failure, or give it
// hintPatience (READY and running without a token). Anything else makes the
// worker read the service for the others anyway, so the hint is confirmed
// only when it matters, and once.
func leansOnHint(vm *onegate.VM, reason string) bool {
	return reason == "" || failed(vm) || (isReady(vm) && running(vm))
}

// hintCheck is the one read of the short service document that confirms
// the named master, or replaces it with the master role.
type hintCheck struct {
	done bool
	// role is the master role as that read listed it.
	role []int
}

// confirm reads the service once and reports whether the master the
// context names is in the master role. When it is not, the node's master
// list becomes the role's, as if no hint had been given. A failed read is
// retried at the next look: the hint is never acted on unconfirmed.
func (c *hintCheck) confirm(ctx context.Context, d Data) (bool, error) {
	n := d.Node()
	named := n.MasterIDs[0]
	ids, err := readMasterIDs(ctx, d, d.Config().MasterRole)
	if errors.Is(err, ErrUnauthorized) {
		return false, err
	}
	if err != nil {
		return false, Retryable(fmt.Errorf("checking that VM %d, which the context names as the master, is in the master role: %w", named, err))
	}
	c.done, c.role = true, ids
	if slices.Contains(ids, named) {
		return true, nil
	}
	d.Log().Warn("the master the context names is not in the service's master role; ignoring it",
		"master_vm", named, "master_role", d.Config().MasterRole, "role_vms", idList(ids))
	n.MasterIDs, n.MasterHint = ids, false
	return false, nil
}
