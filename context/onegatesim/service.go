package onegatesim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Service and role states, numbered as OneFlow numbers them (Role::STATE and
// Service::STATE share the values used here).
const (
	statePending         = 0
	stateDeploying       = 1
	stateRunning         = 2
	stateWarning         = 4
	stateFailedDeploying = 7
	stateScaling         = 8
	stateCooldown        = 10
)

var stateNames = map[int]string{
	statePending: "PENDING", stateDeploying: "DEPLOYING", stateRunning: "RUNNING", stateWarning: "WARNING",
	stateFailedDeploying: "FAILED_DEPLOYING", stateScaling: "SCALING", stateCooldown: "COOLDOWN",
}

type service struct {
	id    int
	spec  *serviceSpec
	state int
	roles []*role
}

type role struct {
	spec        *roleSpec
	state       int
	cardinality int
	nodes       []*vm // in creation order, as OneFlow lists them
	lastNumber  int   // the next VM's number in "<role>_<n>_(service_<id>)"
}

func (svc *service) role(name string) *role {
	for _, r := range svc.roles {
		if r.spec.name == name {
			return r
		}
	}
	return nil
}

// Instantiate creates a service from a service template (OneFlow 6.x or 7.x
// JSON, as onekube-flow renders it) and an optional instantiate merge
// document (user_inputs_values or custom_attrs_values, networks_values,
// roles[].cardinality), then deploys the roles that may start. VMs of roles
// waiting for their parents appear later, as READY=YES reports arrive.
func (s *Sim) Instantiate(template, merge []byte) (int, error) {
	if s.verErr != nil {
		return 0, s.verErr
	}
	spec, err := parseService(template, merge, s.v)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	if s.endpoint == "" {
		return 0, ErrNoEndpoint
	}
	if _, err := s.dir(); err != nil {
		return 0, err
	}
	svc := &service{id: s.nextSvcID, spec: spec, state: stateDeploying}
	s.nextSvcID++
	for _, rs := range spec.roles {
		svc.roles = append(svc.roles, &role{spec: rs, cardinality: rs.cardinality})
	}
	s.services[svc.id] = svc
	mode := "none"
	if spec.straight {
		mode = "straight"
	}
	s.record(EventServiceCreated, svc.id, -1, "", fmt.Sprintf("name=%q deployment=%s ready_status_gate=%t", spec.name, mode, spec.gate))
	if spec.deployErr != "" {
		s.record(EventError, svc.id, -1, "", spec.deployErr)
		s.setServiceState(svc, stateFailedDeploying)
		return svc.id, nil
	}
	s.advance(svc)
	return svc.id, nil
}

// advance runs OneFlow's deployment strategy until nothing changes: deploy
// the roles that may start, mark roles whose VMs all count as deployed, and
// derive the service state. Callers hold s.mu.
func (s *Sim) advance(svc *service) {
	for changed := true; changed; {
		changed = false
		for _, r := range svc.roles {
			switch r.state {
			case statePending:
				if svc.spec.straight && !s.parentsRunning(svc, r) {
					continue // a missing parent means never, as on the real server
				}
				s.setRoleState(svc, r, stateDeploying)
				s.grow(svc, r, r.cardinality)
				changed = true
			case stateDeploying, stateScaling:
				if !s.roleDeployed(svc, r) {
					continue
				}
				if r.state == stateScaling && s.cooldown(r) > 0 {
					s.setRoleState(svc, r, stateCooldown)
					s.afterCooldown(svc, r)
				} else {
					s.setRoleState(svc, r, stateRunning)
				}
				changed = true
			}
		}
	}
	was := watched(svc)
	s.setServiceState(svc, deriveServiceState(svc))
	if !was && watched(svc) {
		s.rewatch(svc)
	}
}

func deriveServiceState(svc *service) int {
	if svc.state == stateFailedDeploying {
		return stateFailedDeploying
	}
	if svc.state == stateWarning {
		return stateWarning // only the watchdog leaves it (running_wd_cb)
	}
	st := stateRunning
	for _, r := range svc.roles {
		switch r.state {
		case stateFailedDeploying:
			return stateFailedDeploying
		case statePending, stateDeploying:
			if svc.state == stateDeploying {
				st = stateDeploying
			}
		case stateScaling:
			if st == stateRunning || st == stateCooldown {
				st = stateScaling
			}
		case stateCooldown:
			if st == stateRunning {
				st = stateCooldown
			}
		}
	}
	return st
}

func (s *Sim) parentsRunning(svc *service, r *role) bool {
	for _, p := range r.spec.parents {
		pr := svc.role(p)
		if pr == nil || pr.state != stateRunning {
			return false
		}
	}
	return true
}

// roleDeployed: without the gate a VM counts once RUNNING, which simulated
// VMs are from birth; with it, once it reported READY=YES.
func (s *Sim) roleDeployed(svc *service, r *role) bool {
	if shuttingDown(r) {
		return false // a scale-down waits for DONE (EventManager#wait_scaledown_action)
	}
	if !svc.spec.gate {
		return true
	}
	for _, v := range r.nodes {
		if !s.isReady(v) {
			return false
		}
	}
	return true
}

// cooldown is the role's, else oneflow-server.conf's :default_cooldown:
// (300 s, VMRole#initialize), which Options.Cooldown can replace.
func (s *Sim) cooldown(r *role) time.Duration {
	switch {
	case r.spec.cooldown >= 0:
		return r.spec.cooldown
	case s.o.Cooldown < 0:
		return 0
	case s.o.Cooldown == 0:
		return DefaultCooldown
	}
	return s.o.Cooldown
}

func (s *Sim) afterCooldown(svc *service, r *role) {
	t := time.AfterFunc(s.cooldown(r), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed || r.state != stateCooldown {
			return
		}
		s.setRoleState(svc, r, stateRunning)
		s.advance(svc)
	})
	s.timers = append(s.timers, t)
}

func (s *Sim) setRoleState(svc *service, r *role, st int) {
	if r.state == st {
		return
	}
	r.state = st
	s.record(EventRoleState, svc.id, -1, r.spec.name, stateNames[st])
}

func (s *Sim) setServiceState(svc *service, st int) {
	if svc.state == st {
		return
	}
	svc.state = st
	s.record(EventServiceState, svc.id, -1, "", stateNames[st])
}

// grow creates n VMs for the role. A failure fails the role, as a VM that
// cannot be instantiated does in OneFlow. Callers hold s.mu.
func (s *Sim) grow(svc *service, r *role, n int) {
	for range n {
		v, err := s.createVM(svc, r)
		if err != nil {
			s.record(EventError, svc.id, -1, r.spec.name, "creating VM: "+err.Error())
			s.setRoleState(svc, r, stateFailedDeploying)
			return
		}
		r.nodes = append(r.nodes, v)
		s.queueCreated(v.info())
	}
}

// scale is LifeCycleManager#scale_action with force=false, on a
// cardinality OneFlow's route has already passed through .to_i: the service
// must be RUNNING, min_vms and max_vms hold (VMRole#update), and asking for
// the cardinality the role already has is an error. Scaling down terminates
// the role's oldest VMs (Role#shutdown takes nodes[0..n-1]). The messages
// are OneFlow's; OneGate replaces them with its own. Callers hold s.mu.
func (s *Sim) scale(svc *service, roleName string, n int) error {
	if svc.state != stateRunning {
		return fmt.Errorf("Service cannot be scaled in state: %s", stateNames[svc.state])
	}
	r := svc.role(roleName)
	if r == nil {
		return fmt.Errorf("Role %s not found", roleName)
	}
	if n < max(r.spec.minVMs, 0) {
		return fmt.Errorf("Can't scale service %d: Minimum cardinality is %s", svc.id, limitText(r.spec.minVMs))
	}
	if r.spec.maxVMs >= 0 && n > r.spec.maxVMs {
		return fmt.Errorf("Can't scale service %d: Maximum cardinality is %d", svc.id, r.spec.maxVMs)
	}
	if n == r.cardinality {
		return fmt.Errorf("Cardinality of %s is already at %d", roleName, n)
	}
	s.record(EventScale, svc.id, -1, r.spec.name, fmt.Sprintf("cardinality %d -> %d", r.cardinality, n))
	old := len(r.nodes)
	r.cardinality = n
	s.setRoleState(svc, r, stateScaling)
	// scale_action stops watching the service first (@wd.remove_service):
	// the VMs it terminates are not done_wd_cb's.
	s.setServiceState(svc, stateScaling)
	if n > old {
		s.grow(svc, r, n-old)
	} else {
		s.shrink(r, n)
	}
	s.advance(svc)
	return nil
}

// limitText is "#{min_cardinality}": nil prints nothing.
func limitText(n int) string {
	if n < 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// dropNode takes a DONE VM out of its role (scaledown_cb, done_wd_cb).
// Callers hold s.mu.
func (s *Sim) dropNode(v *vm) {
	r := v.role
	for i, n := range r.nodes {
		if n == v {
			r.nodes = append(r.nodes[:i], r.nodes[i+1:]...)
			break
		}
	}
	s.record(EventVMRemoved, v.svc.id, v.id, r.spec.name, "")
}

// ServiceState returns the OneFlow state name of a service ("RUNNING"...),
// or "" if there is no such service.
func (s *Sim) ServiceState(id int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if svc := s.services[id]; svc != nil {
		return stateNames[svc.state]
	}
	return ""
}

// RoleState returns the OneFlow state name of a role, or "".
func (s *Sim) RoleState(serviceID int, roleName string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if svc := s.services[serviceID]; svc != nil {
		if r := svc.role(roleName); r != nil {
			return stateNames[r.state]
		}
	}
	return ""
}

// Scale changes a role's cardinality as OneFlow's scale action would (the
// operator's side of PUT /service/role/:role).
func (s *Sim) Scale(serviceID int, roleName string, cardinality int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	svc := s.services[serviceID]
	if svc == nil {
		return fmt.Errorf("scaling: service %d not found", serviceID)
	}
	if err := s.scale(svc, roleName, cardinality); err != nil {
		return fmt.Errorf("scaling service %d role %s: %s", serviceID, roleName, strings.TrimSpace(err.Error()))
	}
	return nil
}
