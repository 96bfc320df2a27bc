package gate

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/onekube/onekube/context/onegate"
)

// Actor is what remediation and autoscaling do through OneGate besides
// reading: act on a VM of the service (terminate, poweroff, resume,
// rename...; onegate.Client.Action) and set a role's cardinality. Both
// need only this VM's token (vm.action_by_id and
// service.change_cardinality are on by default), and both may be
// disabled by a hardened onegate-server.conf. NewActor adapts the real
// client; tests use fakes.
type Actor interface {
	Action(ctx context.Context, vmID int, perform string, params map[string]string) error
	ScaleRole(ctx context.Context, role string, cardinality int) error
}

var (
	// ErrActionRefused means OneGate answered a VM action with a 500:
	// oned refused it, almost always because the VM's state does not
	// allow it (dm/DispatchManagerActions.cc "This action is not
	// available for state ..."), which 7.2+ hides behind "Internal server
	// error". Not marked Retryable: read the VM's state before trying
	// again.
	ErrActionRefused = errors.New("OneGate refused the VM action (the VM's state does not allow it, or the server failed)")
	// ErrScaleRefused means OneGate answered a cardinality change with
	// its generic 400: OneFlow refused it. The service is not RUNNING
	// (WARNING while a VM is POWEROFF, UNKNOWN or failed; COOLDOWN after
	// a scale; SCALING), the cardinality breaks min_vms/max_vms, or it is
	// the current one (LifeCycleManager#scale_action). Never retried
	// blindly: the caller reports it and waits for the state to change.
	ErrScaleRefused = errors.New("OneFlow refused the scale (service not RUNNING: WARNING, COOLDOWN or SCALING; or outside min_vms/max_vms; or already at that cardinality)")
	// ErrForbidden means the permission is off in onegate-server.conf
	// (403 "Action (...) on resource (...) not supported") or the action
	// is restricted (reboot by default).
	ErrForbidden = errors.New("OneGate forbids this (onegate-server.conf :permissions: or :restricted_actions:)")
)

// NewActor is the production Actor: onegate's client, its errors
// classified as NewClient's are, plus the refusals above.
func NewActor(c Config) (Actor, error) {
	og, err := NewClient(c)
	if err != nil {
		return nil, err
	}
	return og.(classified), nil
}

var _ Actor = classified{}

// Action implements Actor.
func (c classified) Action(ctx context.Context, vmID int, perform string, params map[string]string) error {
	err := c.c.Action(ctx, vmID, perform, params)
	var oe *onegate.Error
	if errors.As(err, &oe) {
		switch oe.Status {
		case http.StatusInternalServerError:
			return fmt.Errorf("%w: %w", ErrActionRefused, err)
		case http.StatusForbidden:
			return fmt.Errorf("%w: %w", ErrForbidden, err)
		}
	}
	return classify(err)
}

// ScaleRole implements Actor.
func (c classified) ScaleRole(ctx context.Context, role string, cardinality int) error {
	err := c.c.ScaleRole(ctx, role, cardinality)
	var oe *onegate.Error
	if errors.As(err, &oe) {
		switch oe.Status {
		case http.StatusBadRequest:
			return fmt.Errorf("%w: %w", ErrScaleRefused, err)
		case http.StatusForbidden:
			return fmt.Errorf("%w: %w", ErrForbidden, err)
		}
	}
	return classify(err)
}
