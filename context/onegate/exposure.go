package onegate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	vmcontext "github.com/onekube/onekube/context"
)

// Answer is one finding of ProbeExposure.
type Answer string

// The answers: Unknown when the probe could not tell.
const (
	Yes     Answer = "yes"
	No      Answer = "no"
	Unknown Answer = "unknown"
)

// Exposure is what this OneGate server lets any VM of a service do beyond
// its own keys (docs/trust.md, "Hardening onegate-server.conf").
type Exposure struct {
	// RestrictedBypass: a restricted attribute (ROLE_NAME, SERVICE_ID) can
	// be written by spelling its name with a leading tab. Yes on every
	// release checked (shared/reference/onegate-trust.md).
	RestrictedBypass Answer
	// UpdateByID: PUT /vms/:id is allowed (:update_by_id: in
	// onegate-server.conf), so any VM can write its siblings' keys.
	UpdateByID Answer
}

// UnknownExposure is the finding of a probe that could not run.
var UnknownExposure = Exposure{RestrictedBypass: Unknown, UpdateByID: Unknown}

// String is the published form, e.g. "restricted-bypass=yes update_by_id=no".
func (e Exposure) String() string {
	return "restricted-bypass=" + string(orUnknown(e.RestrictedBypass)) + " update_by_id=" + string(orUnknown(e.UpdateByID))
}

func orUnknown(a Answer) Answer {
	if a == "" {
		return Unknown
	}
	return a
}

// ProbeExposure finds out, on this VM's own template only, whether the
// server lets restricted attributes through and allows PUT /vms/:id. It
// sends at most two updates, each of which rewrites ROLE_NAME with the
// value roleName it has now (read from GET /vm), spelled with a leading
// tab that hides it from check_restricted_attrs (onegate-server.rb): a
// write that changes nothing, whose verdict is the finding.
//
//  1. PUT /vms/<own ID>. check_permissions(:vm, :update_by_id) runs first,
//     before the VM is even looked up, so 403 "Action (update_by_id) on
//     resource (vm) not supported" means update_by_id is off; 200 means it
//     is on and the bypass works; 403 "Attribute (...) cannot be modified"
//     means it is on and the check caught the spelling.
//  2. Only when update_by_id is off: the same body to PUT /vm.
//
// An error leaves the findings not made Unknown; SERVICE_ID is never
// touched, and nothing is sent when roleName is not a plain value.
func (c *Client) ProbeExposure(ctx context.Context, roleName string) (Exposure, error) {
	e := UnknownExposure
	if err := CheckValue(vmcontext.KeyRoleName, roleName); err != nil {
		return e, fmt.Errorf("onegate: exposure probe: %w", err)
	}
	body := url.Values{"data": {probeLine(roleName)}, "type": {updateMerge}}.Encode()
	byID := "/vms/" + c.vmid
	_, err := c.do(ctx, http.MethodPut, byID, formType, body)
	switch {
	case err == nil:
		return Exposure{RestrictedBypass: Yes, UpdateByID: Yes}, nil
	case isPermissionOff(err):
		e.UpdateByID = No
	case isRestrictedRefusal(err):
		return Exposure{RestrictedBypass: No, UpdateByID: Yes}, nil
	default:
		return e, fmt.Errorf("onegate: exposure probe: %w", err)
	}
	_, err = c.do(ctx, http.MethodPut, "/vm", formType, body)
	switch {
	case err == nil:
		e.RestrictedBypass = Yes
	case isRestrictedRefusal(err):
		e.RestrictedBypass = No
	default:
		return e, fmt.Errorf("onegate: exposure probe: %w", err)
	}
	return e, nil
}

// probeLine is ROLE_NAME=<its value> with the name hidden behind a tab,
// quoted as EncodeUpdate quotes (escape_attr leaves '="' alone).
func probeLine(roleName string) string {
	return "\t" + vmcontext.KeyRoleName + `="` + roleName + `"`
}

// isPermissionOff is check_permissions' refusal: a route turned off in
// onegate-server.conf's :permissions:.
func isPermissionOff(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusForbidden && strings.HasSuffix(e.Body, "not supported")
}

// isRestrictedRefusal is check_restricted_attrs' refusal.
func isRestrictedRefusal(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusForbidden && strings.HasPrefix(e.Body, "Attribute (") &&
		strings.HasSuffix(e.Body, "cannot be modified")
}
