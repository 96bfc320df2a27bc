package onegatesim

import (
	"fmt"
	"strings"
	"time"
)

// Service and role states, numbered as OneFlow numbers them (Role::STATE and
// Service::STATE share the values used here).
const (
	statePending         = 0
	stateDeploying       = 1
	stateRunning         = 2
	stateFailedDeploying = 7
	stateScaling         = 8
	stateCooldown        = 10
)

var stateNames = map[int]string{
	statePending: "PENDING", stateDeploying: "DEPLOYING", stateRunning: "RUNNING",
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
	s.setServiceState(svc, deriveServiceState(svc))
}

func deriveServiceState(svc *service) int {
	if svc.state == stateFailedDeploying {
		return stateFailedDeploying
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

func (s *Sim) cooldown(r *role) time.Duration {
	if r.spec.cooldown >= 0 {
		return r.spec.cooldown
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

// scale applies a cardinality change the way OneFlow's scale action does
// (force=false). The error text is OneFlow's; OneGate replaces it with its
// own generic message. Callers hold s.mu.
func (s *Sim) scale(svc *service, roleName string, card any) error {
	if svc.state != stateRunning {
		return fmt.Errorf("Service cannot be scaled in state: %s", stateNames[svc.state])
	}
	r := svc.role(roleName)
	if r == nil {
		return fmt.Errorf("Role '%s' not found", roleName)
	}
	n, ok, err := rubyInteger(card)
	if err != nil || !ok {
		return fmt.Errorf("cardinality must be an integer")
	}
	if n < r.spec.minVMs {
		return fmt.Errorf("Minimum cardinality is %d", r.spec.minVMs)
	}
	if r.spec.maxVMs >= 0 && n > r.spec.maxVMs {
		return fmt.Errorf("Maximum cardinality is %d", r.spec.maxVMs)
	}
	if n < 0 {
		return fmt.Errorf("cardinality must be >= 0")
	}
	if n == r.cardinality {
		return nil
	}
	s.record(EventScale, svc.id, -1, r.spec.name, fmt.Sprintf("cardinality %d -> %d", r.cardinality, n))
	old := len(r.nodes)
	r.cardinality = n
	s.setRoleState(svc, r, stateScaling)
	if n > old {
		s.grow(svc, r, n-old)
	} else {
		for len(r.nodes) > n { // the newest VMs go first
			s.removeVM(r.nodes[len(r.nodes)-1])
		}
	}
	s.advance(svc)
	return nil
}

// removeVM deletes a VM: it leaves its role, its token stops working and
// its address returns to the pool. Callers hold s.mu.
func (s *Sim) removeVM(v *vm) {
	r := v.role
	for i, n := range r.nodes {
		if n == v {
			r.nodes = append(r.nodes[:i], r.nodes[i+1:]...)
			break
		}
	}
	delete(s.vms, v.id)
	delete(s.usedIPs, v.nic.ip)
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
