package flow

import (
	"fmt"
	"regexp"
	"strings"
)

// rubyWord is the server's /^\w+$/ without Ruby's line anchors, which let
// "a\nb" through and then break the role's $ROLE_NAME references.
var rubyWord = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// server applies the OneFlow server's SCHEMA and validate_values for v.
func (c *checker) server(root jnode, v OneFlowVersion) {
	c.required(root, "name", "the service name (string)")
	c.wantString(root, "name")
	c.wantString(root, "deployment", deployments...)
	c.wantString(root, "description")
	c.wantString(root, "shutdown_action", shutdownActions...)
	for _, k := range []string{"ready_status_gate", "automatic_deletion", "on_hold"} {
		c.wantBool(root, k)
	}
	c.wantObject(root, "networks")
	if nv, ok := c.wantArray(root, "networks_values"); ok {
		arr, _ := nv.arr()
		for i := range arr {
			if e := nv.index(i); typeName(e.v) != "an object" {
				c.ps.errorf(e.path, "want an object, got %s", typeName(e.v))
			}
		}
	}
	inputs := "user_inputs"
	if v == Version6 {
		inputs = "custom_attrs"
	}
	c.wantObject(root, inputs)
	c.wantObject(root, inputs+"_values")

	if _, ok := c.required(root, "roles", "the roles (array)"); !ok {
		return
	}
	roles, ok := c.wantArray(root, "roles")
	if !ok {
		return
	}
	arr, _ := roles.arr()
	seen := map[string]string{}
	for i := range arr {
		r := roles.index(i)
		if _, isObj := r.obj(); !isObj {
			c.ps.errorf(r.path, "want a role object, got %s", typeName(r.v))
			continue
		}
		c.role(r, v)
		if name, ok := r.get("name"); ok {
			if s, isStr := name.str(); isStr {
				if first, dup := seen[s]; dup {
					c.ps.errorf(name.path, "role name %q is already used by %s: role names must be unique", s, first)
				} else {
					seen[s] = r.path
				}
			}
		}
	}
}

func (c *checker) role(r jnode, v OneFlowVersion) {
	if _, ok := c.required(r, "name", "the role name (string)"); ok {
		if s, ok := c.wantString(r, "name"); ok && !rubyWord.MatchString(s) {
			c.ps.errorf(r.path+".name", "%q: role names may hold only letters, digits and _ (^\\w+$)", s)
		}
	}
	vr := false
	switch v {
	case Version6:
		if c.convert6 {
			c.convertedTemplate(r)
		} else {
			c.required(r, "vm_template", "the VM template ID (vm_template, integer)")
			c.wantInt(r, "vm_template", -1)
		}
		c.wantString(r, "vm_template_contents")
		c.wantObject(r, "custom_attrs")
		c.wantObject(r, "custom_attrs_values")
	default:
		c.required(r, "type", `the role type ("vm" or "vr")`)
		t, _ := c.wantString(r, "type", "vm", "vr")
		vr = t == "vr"
		c.required(r, "template_id", "the VM template ID (template_id, integer)")
		c.wantInt(r, "template_id", -1)
		c.wantObject(r, "template_contents")
		c.wantObject(r, "user_inputs")
		c.wantObject(r, "user_inputs_values")
	}
	card, hasCard := c.wantInt(r, "cardinality", 0)
	for _, k := range []string{"cardinality", "max_vms", "min_vms"} {
		if n, ok := (&checker{}).asInt(mustGet(r, k)); ok && n > MaxNodes {
			c.ps.warnf(childPath(r.path, k), "%d VMs: beyond the %d nodes Kubernetes supports", n, MaxNodes)
		}
	}
	if pa, ok := c.wantArray(r, "parents"); ok {
		arr, _ := pa.arr()
		for i := range arr {
			if e := pa.index(i); typeName(e.v) != "a string" {
				c.ps.errorf(e.path, "want a role name (string), got %s", typeName(e.v))
			}
		}
	}
	c.wantBool(r, "on_hold")
	if vr {
		c.vrFloating(r, card)
		return
	}
	c.wantString(r, "shutdown_action", shutdownActions...)
	lo, hasMin := c.wantInt(r, "min_vms", 0)
	hi, hasMax := c.wantInt(r, "max_vms", 0)
	c.wantInt(r, "cooldown", 0)
	if !hasCard {
		card = 0 // the server's default
	}
	if hasMin && lo > card {
		c.ps.errorf(r.path+".min_vms", "min_vms %d is above the cardinality %d", lo, card)
	}
	if hasMax && card > hi {
		c.ps.errorf(r.path+".max_vms", "max_vms %d is below the cardinality %d", hi, card)
	}
	policies := false
	for _, k := range []string{"elasticity_policies", "scheduled_policies"} {
		pa, ok := c.wantArray(r, k)
		if !ok {
			continue
		}
		arr, _ := pa.arr()
		policies = policies || len(arr) > 0
		for i := range arr {
			p := pa.index(i)
			if _, isObj := p.obj(); !isObj {
				c.ps.errorf(p.path, "want a policy object, got %s", typeName(p.v))
				continue
			}
			if k == "elasticity_policies" {
				c.elasticity(p)
			} else {
				c.scheduled(p)
			}
		}
	}
	if policies && (!hasMin || !hasMax) {
		c.ps.errorf(r.path, "a role with elasticity or scheduled policies needs both min_vms and max_vms")
	}
	c.policies(r)
}

func (c *checker) policyCommon(p jnode) {
	c.required(p, "type", "the policy type")
	c.wantString(p, "type", policyTypes...)
	c.required(p, "adjust", "adjust (integer)")
	c.wantInt(p, "adjust", -1)
	c.wantInt(p, "min_adjust_step", 1)
}

func (c *checker) elasticity(p jnode) {
	c.policyCommon(p)
	if _, ok := c.required(p, "expression", `the expression, e.g. "CPU > 80"`); ok {
		if s, ok := c.wantString(p, "expression"); ok {
			if s == "" {
				c.ps.errorf(p.path+".expression", "must not be empty")
			} else if err := CheckExpression(s); err != nil {
				c.ps.errorf(p.path+".expression", "%v", err)
			}
		}
	}
	for _, k := range []string{"period_number", "period", "cooldown"} {
		c.wantInt(p, k, 0)
	}
}

func (c *checker) scheduled(p jnode) {
	c.policyCommon(p)
	start, hasStart := c.wantString(p, "start_time")
	rec, hasRec := c.wantString(p, "recurrence")
	switch {
	case p.has("start_time") == p.has("recurrence"):
		c.ps.errorf(p.path, "set exactly one of start_time and recurrence")
	case hasRec:
		if err := CheckRecurrence(rec); err != nil {
			c.ps.errorf(p.path+".recurrence", "%v", err)
		}
	case hasStart:
		if err := checkStartTime(start); err != nil {
			c.ps.warnf(p.path+".start_time", "%v; the server may reject it", err)
		}
	}
}

// vrFloating: a virtual router role with more than one VM needs a floating
// IP on some NIC (validate_vrvalues).
func (c *checker) vrFloating(r jnode, card int64) {
	tc, ok := r.get("template_contents")
	if !ok || card <= 1 {
		return
	}
	nics, ok := tc.get("NIC")
	arr, isArr := nics.arr()
	if !ok || !isArr {
		return
	}
	for i := range arr {
		for _, k := range nics.index(i).keys() {
			if strings.HasPrefix(k, "FLOATING") {
				return
			}
		}
	}
	c.ps.errorf(nics.path, "%s", fmt.Sprintf("a virtual router role with cardinality %d needs a NIC with FLOATING_IP", card))
}

// convertedTemplate: a 7.x server converting a 6.x role takes
// vm_template.to_i as template_id (convert_template), so a missing or
// non-numeric vm_template silently becomes VM template 0.
func (c *checker) convertedTemplate(r jnode) {
	if !r.hasKey("vm_template") {
		c.ps.warnf(childPath(r.path, "vm_template"), "missing: the 7.x server converts this role with template_id 0, which is rarely the VM template meant")
		return
	}
	obj, _ := r.obj()
	c.convertedID(jnode{obj["vm_template"], childPath(r.path, "vm_template")})
}
