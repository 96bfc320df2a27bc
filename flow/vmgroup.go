package flow

import "fmt"

// Host anti-affinity. OneFlow has no placement of its own (nothing in
// src/flow at release-7.4.0 or 6.10.5 mentions VM groups); oned's VM
// groups are the native way. A VM template (here the role's extra
// template) that says VMGROUP = [ VMGROUP_NAME = n, ROLE = r ] puts the VM
// in role r of the VM group n owned by the VM's owner
// (VMGroupPool::get_from_attribute, VMGROUP_UID defaulting to the owner;
// VMGroupPool::vmgroup_attribute refuses the VM when the group or role is
// missing). VMGROUP is not among oned.conf's VM_RESTRICTED_ATTR (7.4.0,
// 6.10.5), so a user who is no admin may set it in the extra template
// OneFlow instantiates with. A role with POLICY = "ANTI_AFFINED" keeps its VMs on different
// hosts: the scheduler adds each placed sibling's host to a VM's
// requirements (VMGroupXML::set_antiaffinity_requirements,
// src/schedm_mad/remotes/rank at release-7.4.0, src/scheduler at
// 6.10.5). It is a hard rule: with fewer hosts than VMs in the role, the
// extra VMs stay PENDING and the role never deploys, hence the opt-out.
//
// The name is resolved against the VMs' owner, the user who instantiates
// the service, not the template's owner: that user must own a VM group of
// this name (create registers one for its caller; render vm-group prints
// it). All clusters instantiated from one service template share it, so
// their masters avoid each other's hosts too: register one service
// template per cluster (create --name).

// VMGroupRoleAntiAffined is the VM group role policy that spreads VMs.
const VMGroupRoleAntiAffined = "ANTI_AFFINED"

// VMGroupName is the VM group the spreading roles' VMs join:
// "<cluster name>-anti-affinity".
func (s Spec) VMGroupName() string { return s.Metadata.Name + "-anti-affinity" }

// SpreadRoles returns the roles whose VMs go on different hosts, in role
// order; empty means the service needs no VM group.
func (s Spec) SpreadRoles() []string {
	var out []string
	for _, name := range []string{RoleMaster, RoleWorker} {
		if r, _ := s.Role(name); r.Spread(name) {
			out = append(out, name)
		}
	}
	return out
}

// RenderVMGroup renders the VM group for 'onevmgroup create': one role per
// spreading role, same name, POLICY = "ANTI_AFFINED". It returns "" when no
// role spreads.
func RenderVMGroup(spec Spec) (string, error) {
	applyDefaults(&spec)
	if err := specError(spec); err != nil {
		return "", err
	}
	roles := spec.SpreadRoles()
	if len(roles) == 0 {
		return "", nil
	}
	t := oneTemplate{
		pair("NAME", spec.VMGroupName()),
		pair("DESCRIPTION", fmt.Sprintf("Host anti-affinity of the %s cluster's roles (onekube-flow)", spec.Metadata.Name)),
	}
	for _, r := range roles {
		t = append(t, vector("ROLE", pair("NAME", r), pair("POLICY", VMGroupRoleAntiAffined)))
	}
	return t.text()
}

// vmGroupRef is the VMGROUP attribute of a spreading role's VMs.
func vmGroupRef(s Spec, role string) (map[string]string, bool) {
	if r, _ := s.Role(role); !r.Spread(role) {
		return nil, false
	}
	return map[string]string{"VMGROUP_NAME": s.VMGroupName(), "ROLE": role}, true
}
