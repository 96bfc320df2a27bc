package onegatesim

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// Handlers for the routes that look beyond the calling VM: /vms/:id, the
// service document, scaling and actions. Callers hold s.mu.

var serviceIDRE = regexp.MustCompile(`(?m)^\d+$`) // Ruby's ^...$ match per line

// serviceOf is get_service: the caller's SERVICE_ID must look numeric and
// name an existing service.
func (s *Sim) serviceOf(idText string, present bool) (*service, *reply) {
	if !present || !serviceIDRE.MatchString(idText) {
		r := text(http.StatusBadRequest, "Empty or invalid SERVICE_ID")
		return nil, &r
	}
	id, err := strconv.Atoi(idText)
	svc := s.services[id]
	if err != nil || svc == nil {
		r := text(http.StatusNotFound, "Service "+idText+" not found")
		return nil, &r
	}
	return svc, nil
}

func serviceIDOf(v *vm) (string, bool) {
	a, ok := lookup(v.user, "SERVICE_ID")
	if !ok || a.isVector() {
		return "", false
	}
	return a.value, true
}

// checkInService is check_vm_in_service: the VM must be a node of the
// caller's service.
func (s *Sim) checkInService(src *vm, requested int) (*service, *reply) {
	idText, ok := serviceIDOf(src)
	svc, fail := s.serviceOf(idText, ok)
	if fail != nil {
		return nil, fail
	}
	for _, r := range svc.roles {
		for _, n := range r.nodes {
			if n.id == requested {
				return svc, nil
			}
		}
	}
	r := text(http.StatusBadRequest, fmt.Sprintf("Service %s does not contain VM %d.", idText, requested))
	return nil, &r
}

// requestedVM is get_requested_vm: itself (6.0+), else a VM of the same service.
func (s *Sim) requestedVM(src *vm, param string) (*vm, *reply) {
	id := rubyToI(param)
	if s.v.selfLookup() && id == src.id {
		return src, nil
	}
	if _, ok := serviceIDOf(src); !ok && s.v.selfLookup() {
		r := text(http.StatusBadRequest, "This VM does not belong to any Virtual Router or Service, so it cannot retrieve information from other VMs")
		return nil, &r
	}
	if _, fail := s.checkInService(src, id); fail != nil {
		return nil, fail
	}
	v := s.vms[id]
	if v == nil {
		r := text(http.StatusNotFound, fmt.Sprintf("[one.vm.info] Error getting virtual machine [%d].", id))
		return nil, &r
	}
	return v, nil
}

// getService answers GET /service; any "extended" parameter with a value,
// "false" included, selects the full form (5.12+).
func (s *Sim) getService(r *http.Request, src *vm, body []byte) reply {
	svc, fail := s.checkInService(src, src.id)
	if fail != nil {
		return *fail
	}
	ps, _ := params(r, body)
	ext := ps["extended"]
	return jsonReply(s.serviceHash(svc, s.v.shortService() && ext.present && !ext.isNil))
}

// scaleRole answers PUT /service/role/:role {"cardinality": N}.
func (s *Sim) scaleRole(src *vm, roleName string, body []byte) reply {
	svc, fail := s.checkInService(src, src.id)
	if fail != nil {
		return *fail
	}
	doc, err := decodeJSON(body)
	m, isObj := doc.(map[string]any)
	if err != nil || !isObj {
		return text(http.StatusInternalServerError, msgInternal) // JSON.parse(...)["cardinality"] raising
	}
	if err := s.scale(svc, roleName, m["cardinality"]); err != nil {
		s.o.Logf("onegatesim: scaling service %d role %s refused: %v", svc.id, roleName, err)
		return text(http.StatusBadRequest, fmt.Sprintf("Error performing action on service %d role %s", svc.id, roleName))
	}
	return reply{status: http.StatusOK}
}

// vmActions are the actions the server knows; the simulator gives effect
// only to those that end the VM.
var vmActions = map[string]bool{
	"deploy": true, "hold": true, "livemigrate": true, "migrate": true, "resume": true,
	"release": true, "stop": true, "suspend": true, "saveas": true, "snapshot_create": true,
	"snapshot_revert": true, "snapshot_delete": true, "terminate": true, "reboot": true,
	"poweroff": true, "chown": true, "chmod": true, "resize": true, "attachdisk": true,
	"detachdisk": true, "attachnic": true, "detachnic": true, "rename": true, "undeploy": true,
	"resched": true, "unresched": true, "recover": true, "delete": true, "shutdown": true,
}

// action answers POST /vms/:id/action {"action":{"perform":...}}.
func (s *Sim) action(v *vm, body []byte) reply {
	doc, err := decodeJSON(body)
	if err != nil {
		return text(http.StatusBadRequest, err.Error())
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return text(http.StatusInternalServerError, msgInternal)
	}
	act, ok := m["action"]
	if !ok {
		return text(http.StatusBadRequest, "Error parsing JSON: Wrong resource type")
	}
	am, ok := act.(map[string]any)
	if !ok {
		return text(http.StatusInternalServerError, msgInternal)
	}
	perform := scalarString(am["perform"])
	if strings.ToLower(perform) == "reboot" { // default :restricted_actions:
		return text(http.StatusForbidden, "Action ("+perform+") is not allowed on this resource")
	}
	if !vmActions[perform] {
		return text(http.StatusInternalServerError, perform+" action not  available for this resource")
	}
	s.record(EventVMAction, v.svc.id, v.id, v.role.spec.name, "perform="+perform)
	switch perform {
	case "terminate", "delete", "shutdown":
		s.removeVM(v)
		s.advance(v.svc)
	}
	return reply{status: http.StatusNoContent}
}
