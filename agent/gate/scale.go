package gate

import (
	"context"
)

// RoleScaler changes a role's cardinality (PUT /service/role/:role).
type RoleScaler interface {
	ScaleRole(ctx context.Context, role string, cardinality int) error
}

// VMActions performs an action on a VM of the service
// (POST /vms/:id/action).
type VMActions interface {
	Action(ctx context.Context, vmID int, perform string, params map[string]string) error
}

var (
	_ RoleScaler = classified{}
	_ VMActions  = classified{}
)

// Scaler returns og's role scaling, when og is the production client.
func Scaler(og OneGate) (RoleScaler, bool) {
	c, ok := og.(classified)
	return c, ok
}

// ActionsOf returns og's VM actions, when og is the production client
// (tests hand serve fakes that may have none; the callers then leave what
// needs them off).
func ActionsOf(og OneGate) (VMActions, bool) {
	c, ok := og.(classified)
	return c, ok
}
