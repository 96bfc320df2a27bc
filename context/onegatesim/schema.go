package onegatesim

import "regexp"

// The service template schemas of OneFlow
// (src/oca/ruby/opennebula/flow/service_template.rb): ROLE_SCHEMA and SCHEMA
// at release-6.10.5 (6.x keys, roles checked through SCHEMA), VM_ROLE_SCHEMA
// and SCHEMA at release-7.4.0 (roles checked one by one, by type). Only the
// "vm" role type is simulated.

func intp(n int) *int { return &n }

// roleNameRE is Ruby's /^\w+$/: line anchors, so "a\nb" passes.
var roleNameRE = regexp.MustCompile(`(?m)^\w+$`)

var shutdownActions = []string{"terminate", "terminate-hard", "shutdown", "shutdown-hard"}
var policyTypes = []string{"CHANGE", "CARDINALITY", "PERCENTAGE_CHANGE"}

func sObject(props ...vprop) *vschema    { return &vschema{typ: "object", props: props} }
func sProp(key string, s *vschema) vprop { return vprop{key, s} }
func sString() *vschema                  { return &vschema{typ: "string"} }
func sInt() *vschema                     { return &vschema{typ: "integer"} }
func sBool() *vschema                    { return &vschema{typ: "boolean"} }
func sAnyObject() *vschema               { return &vschema{typ: "object"} }
func sArrayOf(s *vschema) *vschema       { return &vschema{typ: "array", items: s} }
func (s *vschema) req() *vschema         { s.required = true; return s }
func (s *vschema) minimum(n int) *vschema {
	s.min = intp(n)
	return s
}
func (s *vschema) oneOf(vals ...string) *vschema { s.enum = vals; return s }
func (s *vschema) dflt(v any) *vschema           { s.def = v; return s }

func roleName() *vschema {
	return &vschema{typ: "string", required: true, regex: `/^\w+$/`, re: roleNameRE}
}

func policies() (elasticity, scheduled *vschema) {
	elasticity = sArrayOf(sObject(
		sProp("type", sString().oneOf(policyTypes...).req()),
		sProp("adjust", sInt().req()),
		sProp("min_adjust_step", sInt().minimum(1)),
		sProp("period_number", sInt().minimum(0)),
		sProp("period", sInt().minimum(0)),
		sProp("expression", sString().req()),
		sProp("cooldown", sInt().minimum(0)),
	))
	scheduled = sArrayOf(sObject(
		sProp("type", sString().oneOf(policyTypes...).req()),
		sProp("adjust", sInt().req()),
		sProp("min_adjust_step", sInt().minimum(1)),
		sProp("start_time", sString()),
		sProp("recurrence", sString()),
	))
	return elasticity, scheduled
}

// roleSchema6 is ROLE_SCHEMA of 6.x; the cardinality default was 1 before 6.10.
func roleSchema6(v version) *vschema {
	el, sc := policies()
	return sObject(
		sProp("name", roleName()),
		sProp("cardinality", sInt().dflt(v.defaultCardinality()).minimum(0)),
		sProp("vm_template", sInt().req()),
		sProp("vm_template_contents", sString()),
		sProp("custom_attrs", sAnyObject()),
		sProp("custom_attrs_values", sAnyObject()),
		sProp("parents", sArrayOf(sString())),
		sProp("shutdown_action", sString().oneOf(shutdownActions...)),
		sProp("min_vms", sInt().minimum(0)),
		sProp("max_vms", sInt().minimum(0)),
		sProp("cooldown", sInt().minimum(0)),
		sProp("on_hold", sBool()),
		sProp("elasticity_policies", el),
		sProp("scheduled_policies", sc),
	)
}

// vmRoleSchema7 is VM_ROLE_SCHEMA of 7.x.
func vmRoleSchema7() *vschema {
	el, sc := policies()
	return sObject(
		sProp("name", roleName()),
		sProp("type", sString().oneOf("vm").req()),
		sProp("cardinality", sInt().dflt(0).minimum(0)),
		sProp("template_id", sInt().req()),
		sProp("template_contents", sAnyObject()),
		sProp("user_inputs", sAnyObject()),
		sProp("user_inputs_values", sAnyObject()),
		sProp("parents", sArrayOf(sString())),
		sProp("shutdown_action", sString().oneOf(shutdownActions...)),
		sProp("min_vms", sInt().minimum(0)),
		sProp("max_vms", sInt().minimum(0)),
		sProp("cooldown", sInt().minimum(0)),
		sProp("on_hold", sBool()),
		sProp("elasticity_policies", el),
		sProp("scheduled_policies", sc),
	)
}

// serviceSchema is SCHEMA: 6.x checks roles as its items, 7.x (items [])
// leaves them to vmRoleSchema7.
func serviceSchema(v version) *vschema {
	inputs, values := "custom_attrs", "custom_attrs_values"
	roles := sArrayOf(roleSchema6(v))
	if v.flow7() {
		inputs, values = "user_inputs", "user_inputs_values"
		roles = sArrayOf(nil)
	}
	roles.required = true
	return sObject(
		sProp("name", sString().req()),
		sProp("deployment", sString().oneOf("none", "straight").dflt("none")),
		sProp("description", sString().dflt("")),
		sProp("shutdown_action", sString().oneOf(shutdownActions...)),
		sProp("roles", roles),
		sProp(inputs, sAnyObject()),
		sProp(values, sAnyObject()),
		sProp("ready_status_gate", sBool()),
		sProp("automatic_deletion", sBool()),
		sProp("networks", sAnyObject()),
		sProp("networks_values", sArrayOf(sAnyObject())),
		sProp("on_hold", sBool()),
	)
}
