package onegatesim

import (
	"sort"
	"strconv"
)

// This file builds the JSON documents the OneGate server returns, field for
// field and in the same key order (reference onegate.md §1.4, §1.5).

// userTemplateJSON renders a USER_TEMPLATE as oned's XML turned into a Ruby
// hash: keys in name order, a repeated key as an array, vectors as objects.
// SCHED_MESSAGE is hidden, as build_vm_hash hides it.
func userTemplateJSON(list []attr, hide bool) obj {
	groups := map[string][]attr{}
	for _, a := range list {
		if hide && a.name == "SCHED_MESSAGE" {
			continue
		}
		groups[a.name] = append(groups[a.name], a)
	}
	out := obj{}
	for _, name := range sortedKeys(groups) {
		out = append(out, field{name, attrsJSON(groups[name])})
	}
	return out
}

func attrsJSON(as []attr) any {
	one := func(a attr) any {
		if !a.isVector() {
			return a.value
		}
		o := obj{}
		for _, k := range sortedKeys(a.vector) {
			o = append(o, field{k, a.vector[k]})
		}
		return o
	}
	if len(as) == 1 {
		return one(as[0])
	}
	arr := make([]any, len(as))
	for i, a := range as {
		arr[i] = one(a)
	}
	return arr
}

// nicFields lists the VM's NIC as oned stores it (keys sorted).
func (s *Sim) nicFields(v *vm) map[string]string {
	return map[string]string{
		"IP": v.nic.ip.String(), "MAC": v.nic.mac, "NAME": "NIC0", "NETWORK": v.netName,
		"NETWORK_ID": v.netID, "NIC_ID": "0", "SECURITY_GROUPS": "0",
	}
}

// filteredNIC is a NIC through build_vm_hash's NIC_VALID_KEYS.
func (s *Sim) filteredNIC(v *vm) obj {
	valid := map[string]bool{"IP": true, "IP6_LINK": true, "IP6_SITE": true, "IP6_GLOBAL": true, "NETWORK": true, "MAC": true}
	if s.v.nicNames() {
		valid["NAME"], valid["PARENT"] = true, true
	}
	if s.v.atLeast(6, 0) {
		valid["EXTERNAL"], valid["EXTERNAL_IP"] = true, true
	}
	all := s.nicFields(v)
	o := obj{}
	for _, k := range sortedKeys(all) {
		if valid[k] {
			o = append(o, field{k, all[k]})
		}
	}
	return o
}

// vmHash is build_vm_hash: GET /vm, GET /vms/:id, and ≤5.10 service nodes.
func (s *Sim) vmHash(v *vm) obj {
	tmpl := obj{{"NIC", []any{s.filteredNIC(v)}}}
	if s.v.nicNames() {
		tmpl = append(tmpl, field{"NIC_ALIAS", []any{}})
	}
	return obj{{"VM", obj{
		{"NAME", v.name},
		{"ID", strconv.Itoa(v.id)},
		{"STATE", strconv.Itoa(v.vmState())},
		{"LCM_STATE", strconv.Itoa(v.lcmState())},
		{"USER_TEMPLATE", userTemplateJSON(v.user, true)},
		{"TEMPLATE", tmpl},
	}}}
}

// fullVMHash is vm.to_hash, what GET /service?extended returns per node:
// nothing filtered, a single NIC as an object (XML to hash), CONTEXT included.
func (s *Sim) fullVMHash(v *vm) obj {
	tmpl := map[string]any{}
	ctx := obj{}
	for _, k := range sortedKeys(v.context) {
		ctx = append(ctx, field{k, v.context[k]})
	}
	tmpl["CONTEXT"] = ctx
	nic := obj{}
	nf := s.nicFields(v)
	for _, k := range sortedKeys(nf) {
		nic = append(nic, field{k, nf[k]})
	}
	tmpl["NIC"] = nic
	tmpl["TEMPLATE_ID"] = strconv.Itoa(v.role.spec.templateID)
	tmpl["VMID"] = strconv.Itoa(v.id)
	groups := map[string][]attr{}
	for _, a := range append(append([]attr{}, v.system...), diskAttrs(v.disks)...) {
		groups[a.name] = append(groups[a.name], a)
	}
	for name, as := range groups {
		tmpl[name] = attrsJSON(as)
	}
	tkeys := make([]string, 0, len(tmpl))
	for k := range tmpl {
		tkeys = append(tkeys, k)
	}
	sort.Strings(tkeys)
	t := obj{}
	for _, k := range tkeys {
		t = append(t, field{k, tmpl[k]})
	}
	stime := strconv.FormatInt(v.stime.Unix(), 10)
	return obj{{"VM", obj{
		{"ID", strconv.Itoa(v.id)}, {"UID", "0"}, {"GID", "0"},
		{"UNAME", "oneadmin"}, {"GNAME", "oneadmin"}, {"NAME", v.name},
		{"PERMISSIONS", obj{
			{"OWNER_U", "1"}, {"OWNER_M", "1"}, {"OWNER_A", "0"},
			{"GROUP_U", "0"}, {"GROUP_M", "0"}, {"GROUP_A", "0"},
			{"OTHER_U", "0"}, {"OTHER_M", "0"}, {"OTHER_A", "0"},
		}},
		{"LAST_POLL", stime}, {"STATE", strconv.Itoa(v.vmState())}, {"LCM_STATE", strconv.Itoa(v.lcmState())},
		{"PREV_STATE", "3"}, {"PREV_LCM_STATE", "3"}, {"RESCHED", "0"},
		{"STIME", stime}, {"ETIME", "0"}, {"DEPLOY_ID", "one-" + strconv.Itoa(v.id)},
		{"MONITORING", obj{}},
		{"TEMPLATE", t},
		{"USER_TEMPLATE", userTemplateJSON(v.user, false)},
		{"HISTORY_RECORDS", obj{}},
	}}}
}

// serviceHash is build_service_hash. extended (5.12+) replaces each node's
// stored vm_info with the full VM; ≤5.10 nodes carry the filtered full VM
// and a boolean running.
func (s *Sim) serviceHash(svc *service, extended bool) obj {
	roles := []any{}
	for _, r := range svc.roles {
		nodes := []any{}
		for _, v := range r.nodes {
			var info any
			var running any // null since 5.12
			switch {
			case !s.v.shortService():
				info, running = s.vmHash(v), true
			case extended:
				info = s.fullVMHash(v)
			default:
				info = obj{{"VM", obj{
					{"ID", strconv.Itoa(v.id)}, {"UID", "0"}, {"GID", "0"},
					{"UNAME", "oneadmin"}, {"GNAME", "oneadmin"}, {"NAME", v.name},
				}}}
			}
			nodes = append(nodes, obj{{"deploy_id", v.id}, {"running", running}, {"vm_info", info}})
		}
		roles = append(roles, obj{
			{"name", r.spec.name}, {"cardinality", r.cardinality}, {"state", r.state}, {"nodes", nodes},
		})
	}
	return obj{{"SERVICE", obj{
		{"name", svc.spec.name}, {"id", strconv.Itoa(svc.id)}, {"state", svc.state}, {"roles", roles},
	}}}
}
