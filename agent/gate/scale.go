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

var _ RoleScaler = classified{}

// ScaleRole implements RoleScaler.
func (c classified) ScaleRole(ctx context.Context, role string, cardinality int) error {
	return classify(c.c.ScaleRole(ctx, role, cardinality))
}

// Scaler returns og's role scaling, when og is the production client.
func Scaler(og OneGate) (RoleScaler, bool) {
	c, ok := og.(classified)
	return c, ok
}

// ActionsOf returns og's VM actions when its client has them. The
// onegate client gains Action on another branch; until then this is
// false and the callers leave what needs it off.
func ActionsOf(og OneGate) (VMActions, bool) {
	c, ok := og.(classified)
	if !ok {
		return nil, false
	}
	a, ok := any(c.c).(VMActions)
	if !ok {
		return nil, false
	}
	return classifiedActions{a}, true
}

type classifiedActions struct{ a VMActions }

func (c classifiedActions) Action(ctx context.Context, vmID int, perform string, params map[string]string) error {
	return classify(c.a.Action(ctx, vmID, perform, params))
}
