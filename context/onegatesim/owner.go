package onegatesim

import "maps"

// ownerState is the OpenNebula user the simulated VMs belong to: oned
// resolves $UNAME and $USER[...] in a CONTEXT from it (vm_var_syntax.y
// insert_single and get_user_attribute, release-7.4.0), and the oned
// facade's one.user.update changes its template. The zero value is
// oneadmin (ID 0) with an empty template.
type ownerState struct {
	id       int
	name     string
	template map[string]string
}

func (o *ownerState) uname() string {
	if o.name == "" {
		return "oneadmin"
	}
	return o.name
}

// SetOwner names the user that owns the VMs created from now on, with
// the attributes of their user template.
func (s *Sim) SetOwner(id int, name string, template map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.owner = ownerState{id: id, name: name, template: maps.Clone(template)}
}

// OwnerTemplate returns a copy of the owner's user template.
func (s *Sim) OwnerTemplate() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.owner.template)
}
