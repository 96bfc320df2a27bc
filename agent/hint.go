package agent

import (
	"slices"
)

// The master the context names (ONEKUBE_MASTER_VM_ID) spares a straight
// worker the wait for OneFlow's list of masters, but it is a CONTEXT value:
// a template edited by hand, or one left from another service, can name any
// VM. A worker therefore acts on that VM's word (joins it, stops on its
// failure, waits on it) only when OneFlow's service document lists it in
// the master role. Role membership is taken from GET /service
// (roles[].nodes[], which OneFlow keeps), never from the VM's own
// USER_TEMPLATE ROLE_NAME, which any VM of the service can rewrite
// (onegate-server.rb: check_restricted_attrs compares only the first
// '='-separated word of each line; see onegate-trust.md). The read that
// confirms it is the one discovery makes anyway to find this VM's own role
// (membership.go): a straight worker reads the short service document
// once, as before.

// confirmHint checks the master the context names against the master role
// as the service document lists it (role). It returns the masters to look
// at and whether they are the named one alone.
func confirmHint(d Data, named int, role []int) ([]int, bool) {
	if slices.Contains(role, named) {
		return []int{named}, true
	}
	d.Log().Warn("the master the context names is not in the service's master role; ignoring it",
		"master_vm", named, "master_role", d.Config().MasterRole, "role_vms", idList(role))
	return role, false
}
