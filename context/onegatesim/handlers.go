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

// scaleRole answers PUT /service/role/:role {"cardinality": N}: the
// cardinality read with JSON.parse(request.body.read)["cardinality"] (an
// exception there is not rescued), sent on to OneFlow's scale route, which
// applies .to_i to it. Any refusal by OneFlow is one generic 400.
func (s *Sim) scaleRole(r *http.Request, src *vm, roleName string, body []byte) reply {
	svc, fail := s.checkInService(src, src.id)
	if fail != nil {
		return *fail
	}
	doc, exc := rubyJSONParse(s.routeBody(r, body))
	if exc != nil {
		return s.raised(r, exc)
	}
	card, exc := rubyIndex(doc, "cardinality")
	if exc != nil {
		return s.raised(r, exc)
	}
	refusal := fmt.Sprintf("Error performing action on service %d role %s", svc.id, roleName)
	n, exc := rubyToIValue(card) // oneflow-server.rb: call_body['cardinality'].to_i
	if exc != nil {
		s.o.Logf("onegatesim: OneFlow raised %s scaling service %d role %s", exc.class, svc.id, roleName)
		return text(http.StatusBadRequest, refusal)
	}
	if err := s.scale(svc, roleName, n); err != nil {
		s.o.Logf("onegatesim: scaling service %d role %s refused: %v", svc.id, roleName, err)
		return text(http.StatusBadRequest, refusal)
	}
	return reply{status: http.StatusOK}
}

// vmActions are the actions the server knows (perform_action). terminate,
// poweroff, resume and rename change the simulated VM as oned would
// (vmaction.go); the others are accepted and do nothing.
var vmActions = map[string]bool{
	"deploy": true, "hold": true, "livemigrate": true, "migrate": true, "resume": true,
	"release": true, "stop": true, "suspend": true, "saveas": true, "snapshot_create": true,
	"snapshot_revert": true, "snapshot_delete": true, "terminate": true, "reboot": true,
	"poweroff": true, "chown": true, "chmod": true, "resize": true, "attachdisk": true,
	"detachdisk": true, "attachnic": true, "detachnic": true, "rename": true, "undeploy": true,
	"resched": true, "unresched": true, "recover": true, "delete": true, "shutdown": true,
}

// action answers POST /vms/:id/action {"action":{"perform":...}}, as
// perform_action does: parse_json turns any parse failure into a 400 with
// the parser's message; what it parses is indexed the Ruby way.
func (s *Sim) action(r *http.Request, v *vm, body []byte) reply {
	doc, exc := rubyJSONParse(s.routeBody(r, body))
	if exc != nil {
		return text(http.StatusBadRequest, exc.msg)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return s.raised(r, noMethod("has_key?", doc))
	}
	act, ok := m["action"]
	if !ok {
		return text(http.StatusBadRequest, "Error parsing JSON: Wrong resource type")
	}
	perform, exc := rubyIndex(act, "perform")
	if exc != nil {
		return s.raised(r, exc)
	}
	name := rubyString(perform)
	if truthy(perform) { // check_restricted_actions: action && ...include?(action.downcase)
		p, isStr := perform.(string)
		if !isStr {
			return s.raised(r, noMethod("downcase", perform))
		}
		if strings.ToLower(p) == "reboot" { // the default :restricted_actions:
			return text(http.StatusForbidden, "Action ("+p+") is not allowed on this resource")
		}
	}
	if !vmActions[name] {
		return s.halt500(name + " action not  available for this resource")
	}
	s.record(EventVMAction, v.svc.id, v.id, v.role.spec.name, "perform="+name)
	// perform_action passes action_hash['params'] to OCA as it is:
	// terminate(params), poweroff(params) take it as `hard`, so any
	// value but null and false (even {} or "no") makes them hard, which
	// is what the onegate CLI's --hard sends ("params": true). delete is
	// terminate(true); rename(params) takes it as the name.
	params, _ := rubyIndex(act, "params")
	var err error
	switch name {
	case "terminate", "shutdown", "poweroff":
		if name == "shutdown" {
			name = "terminate"
		}
		err = s.vmAction(v, name, truthy(params))
	case "delete":
		err = s.vmAction(v, "terminate", true)
	case "resume":
		err = s.vmAction(v, name, false)
	case "attachdisk", "detachdisk":
		return s.diskAction(v, name, params)
	case "rename":
		err = s.rename(v, params)
	}
	if err != nil {
		s.o.Logf("onegatesim: %s on VM %d refused: %v", name, v.id, err)
		return s.halt500(err.Error()) // perform_action: halt 500, rc.message
	}
	return reply{status: http.StatusNoContent}
}
