package flow

import "fmt"

// oneflowDefaultCooldown is :default_cooldown: in oneflow-server.conf
// (release-7.4.0 and 6.10.5), a role's cooldown when it sets none.
const oneflowDefaultCooldown = 300

// policyLint is what the lint needs of one elasticity policy, from a
// service template or a spec.
type policyLint struct {
	path       string // the policy's path
	expression string
	typ        string
	adjust     int
	cooldown   *int
}

// lintPolicies reports how hand-written policies behave unlike they read:
// their expressions (LintExpression), a policy cooldown that replaces the
// role's, and scale-down that removes the oldest VMs. roleCooldown nil
// means the role sets none (OneFlow's 300 s).
func lintPolicies(ps *problems, roleCooldown *int, elastic []policyLint, scheduledDown []string) {
	roleCD := oneflowDefaultCooldown
	role := fmt.Sprintf("OneFlow's default %d s (the role sets none)", roleCD)
	if roleCooldown != nil {
		roleCD = *roleCooldown
		role = fmt.Sprintf("the role's %d s", roleCD)
	}
	for _, p := range elastic {
		for _, l := range LintExpression(p.expression) {
			if l.severity == Error {
				ps.errorf(p.path+".expression", "%s", l.msg)
			} else {
				ps.warnf(p.path+".expression", "%s", l.msg)
			}
		}
		// VMRole#scale? returns the policy's cooldown, and
		// ServiceAutoScaler#apply_scaling_policies hands it to
		// LifeCycleManager#update_role_policies, which stores it as
		// the role's (VMRole#update_cooldown), release-7.4.0; the
		// same in 6.10.5 (Role).
		if p.cooldown != nil && *p.cooldown != roleCD {
			ps.warnf(p.path+".cooldown", "when this policy fires, OneFlow writes its cooldown (%d s) over %s and keeps it: every later scale of the role, upgrade and remediation steps included, then waits %d s; set the role's cooldown instead, or drop this one",
				*p.cooldown, role, *p.cooldown)
		}
		if p.adjust < 0 && (p.typ == "CHANGE" || p.typ == "PERCENTAGE_CHANGE") {
			scaleDownWarning(ps, p.path)
		}
	}
	for _, path := range scheduledDown {
		scaleDownWarning(ps, path)
	}
}

// scaleDownWarning: OneFlow removes the role's oldest VMs
// (VMRole#shutdown_nodes takes nodes[0..n-1], release-7.4.0) and only
// sends them the shutdown action; nothing drains the Kubernetes node.
func scaleDownWarning(ps *problems, path string) {
	ps.warnf(path, "scales down: OneFlow removes the role's oldest VMs, whatever runs on them, with no drain; let onekubed's autoscaler (%s) pick and drain the node instead", KeyAutoscale)
}

// policies lints a service template role's elasticity and scheduled
// policies (their server-side checks are in role and elasticity).
func (c *checker) policies(r jnode) {
	var roleCD *int
	if n, ok := (&checker{}).asInt(mustGet(r, "cooldown")); ok && r.has("cooldown") {
		roleCD = ptr(int(n))
	}
	var elastic []policyLint
	var down []string
	for _, k := range []string{"elasticity_policies", "scheduled_policies"} {
		pa, _ := r.get(k)
		arr, _ := pa.arr()
		for i := range arr {
			p := pa.index(i)
			if _, ok := p.obj(); !ok {
				continue
			}
			typ, _ := mustGet(p, "type").str()
			adj, _ := (&checker{}).asInt(mustGet(p, "adjust"))
			if k == "scheduled_policies" {
				if adj < 0 && typ != "CARDINALITY" {
					down = append(down, p.path)
				}
				continue
			}
			pl := policyLint{path: p.path, typ: typ, adjust: int(adj)}
			pl.expression, _ = mustGet(p, "expression").str()
			if CheckExpression(pl.expression) != nil {
				pl.expression = "" // elasticity reported it
			}
			if n, ok := (&checker{}).asInt(mustGet(p, "cooldown")); ok && p.has("cooldown") {
				pl.cooldown = ptr(int(n))
			}
			elastic = append(elastic, pl)
		}
	}
	lintPolicies(&c.ps, roleCD, elastic, down)
}

// specPolicies lints a spec role's policies as policies does a template's.
func specPolicies(ps *problems, name string, r Role) {
	var elastic []policyLint
	var down []string
	for i, p := range r.ElasticityPolicies {
		e := p.Expression
		if CheckExpression(e) != nil {
			e = ""
		}
		elastic = append(elastic, policyLint{path: fmt.Sprintf("%s.elasticityPolicies[%d]", name, i),
			expression: e, typ: p.Type, adjust: p.Adjust, cooldown: p.Cooldown})
	}
	for i, p := range r.ScheduledPolicies {
		if p.Adjust < 0 && p.Type != "CARDINALITY" {
			down = append(down, fmt.Sprintf("%s.scheduledPolicies[%d]", name, i))
		}
	}
	lintPolicies(ps, r.Cooldown, elastic, down)
}
