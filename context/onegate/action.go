package onegate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// VM actions through POST /vms/:id/action (vm.action_by_id; a VM may act
// on itself and on any VM of its service). The server reads
// {"action":{"perform":P,"params":X}} and hands X to OCA unchanged
// (onegate-server.rb perform_action @release-7.4.0 and 6.10.5):
//   - terminate(X), poweroff(X), reboot(X), undeploy(X) take X as `hard`,
//     so ANY value but null or false, even {} or {"hard":false}, makes them
//     hard. The onegate CLI's --hard sends "params": true
//     (share/onegate/onegate). There is no "terminate-hard" perform: the
//     server answers it with a 500.
//   - rename(X) takes X as the new name.
//   - attachdisk(X) is vm.disk_attach(X) = one.vm.attach(id, X): X must be
//     a template String ("DISK=[IMAGE_ID=7]"), never a JSON object;
//     detachdisk(X) is vm.disk_detach(X) = one.vm.detach(id, X): X must be
//     a JSON Integer, the DISK_ID (onegate-server.rb perform_action,
//     oca/ruby/opennebula/virtual_machine.rb disk_attach/disk_detach
//     @release-7.4.0; docs/upgrade-bundle.md).
//   - resume, stop, suspend, hold, release, resched, unresched take none.
//
// The reply is 204. A refusal by oned (a wrong state: "This action is not
// available for state POWEROFF") is a `halt 500` whose body 7.2+ replaces
// with "Internal server error"; reboot is refused with 403 by the default
// :restricted_actions:.

// Action names Action accepts. The -hard ones are OCA's names for the hard
// variants; Action sends them as OneGate knows them.
const (
	ActionTerminate     = "terminate"
	ActionTerminateHard = "terminate-hard"
	ActionPoweroff      = "poweroff"
	ActionPoweroffHard  = "poweroff-hard"
	ActionResume        = "resume"
	ActionRename        = "rename"
	ActionUndeploy      = "undeploy"
	ActionUndeployHard  = "undeploy-hard"
	ActionStop          = "stop"
	ActionSuspend       = "suspend"
	ActionHold          = "hold"
	ActionRelease       = "release"
	ActionResched       = "resched"
	ActionUnresched     = "unresched"
	ActionAttachDisk    = "attachdisk"
	ActionDetachDisk    = "detachdisk"
)

// ParamHard and ParamName are the keys Action's params may carry: "hard"
// ("true" or "false") for terminate, poweroff and undeploy, "name" for
// rename. ParamDiskTemplate (a DISK=[...] template) is attachdisk's only
// param and ParamDiskID (a decimal DISK_ID) detachdisk's; each is sent
// bare, as the String or Integer oned takes.
const (
	ParamHard         = "hard"
	ParamName         = "name"
	ParamDiskTemplate = "disk_template"
	ParamDiskID       = "disk_id"
)

// hardable take OCA's `hard` argument.
var hardable = []string{ActionTerminate, ActionPoweroff, ActionUndeploy}

// bare take no argument.
var bare = []string{ActionResume, ActionStop, ActionSuspend, ActionHold, ActionRelease, ActionResched, ActionUnresched}

// ActionBody builds the request body for an action, or refuses it with
// ErrInvalid: an unknown action, a param it does not take, a hard value
// other than "true"/"false", a missing or invalid rename name (oned's
// PoolObjectSQL::name_is_valid: non-empty, at most 128 bytes, none of
// &|:\";/'#{}$<> or control whitespace). reboot is left out: OneGate
// refuses it by default.
func ActionBody(perform string, params map[string]string) (string, error) {
	hard := false
	if base, ok := strings.CutSuffix(perform, "-hard"); ok && slices.Contains(hardable, base) {
		perform, hard = base, true
		if v, set := params[ParamHard]; set && v != "true" {
			return "", fmt.Errorf("%w: %s-hard with %s=%q", ErrInvalid, base, ParamHard, v)
		}
	}
	allowed := map[string]bool{}
	switch {
	case slices.Contains(hardable, perform):
		allowed[ParamHard] = true
	case perform == ActionRename:
		allowed[ParamName] = true
	case perform == ActionAttachDisk:
		allowed[ParamDiskTemplate] = true
	case perform == ActionDetachDisk:
		allowed[ParamDiskID] = true
	case slices.Contains(bare, perform):
	default:
		return "", fmt.Errorf("%w: VM action %q is not supported", ErrInvalid, perform)
	}
	for k := range params {
		if !allowed[k] {
			return "", fmt.Errorf("%w: VM action %s takes no param %q", ErrInvalid, perform, k)
		}
	}
	var arg any // absent: no "params" at all, never {} (which means hard)
	switch {
	case perform == ActionRename:
		name, ok := params[ParamName]
		if err := checkVMName(name, ok); err != nil {
			return "", err
		}
		arg = name
	case perform == ActionAttachDisk:
		tmpl, err := checkDiskTemplate(params[ParamDiskTemplate])
		if err != nil {
			return "", err
		}
		arg = tmpl
	case perform == ActionDetachDisk:
		id, err := checkDiskID(params[ParamDiskID])
		if err != nil {
			return "", err
		}
		arg = id
	case allowed[ParamHard]:
		switch v, set := params[ParamHard]; {
		case !set || v == "false":
		case v == "true":
			hard = true
		default:
			return "", fmt.Errorf("%w: %s=%q, want true or false", ErrInvalid, ParamHard, v)
		}
		if hard {
			arg = true
		}
	}
	act := map[string]any{"perform": perform}
	if arg != nil {
		act["params"] = arg
	}
	b, err := json.Marshal(map[string]any{"action": act})
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return string(b), nil
}

// checkVMName is PoolObjectSQL::name_is_valid (pool/PoolObjectSQL.cc
// @release-7.4.0).
func checkVMName(name string, set bool) error {
	switch {
	case !set || name == "":
		return fmt.Errorf("%w: rename needs a non-empty %q param", ErrInvalid, ParamName)
	case len(name) > 128:
		return fmt.Errorf("%w: VM name longer than 128 bytes", ErrInvalid)
	case strings.ContainsAny(name, "&|:\\\";/'#{}$<>\t\n\v\f\r"):
		return fmt.Errorf("%w: VM name %q has a character oned refuses", ErrInvalid, name)
	}
	return nil
}

// checkDiskTemplate accepts a single DISK=[...] vector: oned's attach
// reads one DISK from the template (VirtualMachineAttach / disk_attach),
// so anything else is a caller's mistake better refused here.
func checkDiskTemplate(t string) (string, error) {
	t = strings.TrimSpace(t)
	body, ok := strings.CutPrefix(t, "DISK")
	body = strings.TrimSpace(body)
	if body, ok = strings.CutPrefix(body, "="); ok {
		body = strings.TrimSpace(body)
	}
	if !ok || !strings.HasPrefix(body, "[") || !strings.HasSuffix(body, "]") || strings.Count(body, "[") != 1 || strings.Count(body, "]") != 1 ||
		strings.TrimSpace(body[1:len(body)-1]) == "" || strings.ContainsAny(t, "\x00\n\r") {
		return "", fmt.Errorf("%w: attachdisk needs %q = one DISK=[...] template, got %q", ErrInvalid, ParamDiskTemplate, t)
	}
	return t, nil
}

// checkDiskID accepts a DISK_ID: a non-negative decimal integer.
func checkDiskID(v string) (int, error) {
	id, err := strconv.Atoi(v)
	if err != nil || id < 0 || strings.HasPrefix(v, "+") {
		return 0, fmt.Errorf("%w: detachdisk needs %q = a DISK_ID (a non-negative integer), got %q", ErrInvalid, ParamDiskID, v)
	}
	return id, nil
}

// Action performs a VM action on VM vmID (this VM or one of its service)
// through POST /vms/:id/action. perform is one of the Action* names
// ("terminate-hard" is sent as terminate with params true); params are
// ParamHard for terminate/poweroff/undeploy, ParamName for rename,
// ParamDiskTemplate for attachdisk and ParamDiskID for detachdisk.
// Input the server would misread is refused with ErrInvalid before
// anything is sent. A refusal by oned comes back as a 500 (*Error), which
// IsRetryable counts as transient: callers that must not retry blindly
// check the VM's state first.
func (c *Client) Action(ctx context.Context, vmID int, perform string, params map[string]string) error {
	if vmID < 0 {
		return fmt.Errorf("onegate: action %s: %w: VM ID %d", perform, ErrInvalid, vmID)
	}
	body, err := ActionBody(perform, params)
	if err != nil {
		return fmt.Errorf("onegate: action %s on VM %d: %w", perform, vmID, err)
	}
	_, err = c.do(ctx, http.MethodPost, "/vms/"+strconv.Itoa(vmID)+"/action", "application/json", body)
	return err
}
