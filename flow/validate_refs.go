package flow

import (
	"regexp"
	"strings"
)

// parentExpr is OneFlow's parent-role expression, as Role#evaluate scans
// for it (src/flow/lib/models/role.rb, release-6.10.5 and release-7.4.0:
// template.scan(/\$\{(.*?)\}/)); in Go as in Ruby, "." stops at a line
// break.
var parentExpr = regexp.MustCompile(`\$\{(.*?)\}`)

// parentRefs checks every ${role.xpath} in a role's extra template (7.x
// template_contents, 6.x vm_template_contents). Role#evaluate replaces one
// whose role (the text before the first ".") is not among the role's
// parents with "", silently, whether that role exists or not: a worker
// without parents gets an empty ${master.vm.id}.
func (c *checker) parentRefs(r roleRef, names map[string]bool, v OneFlowVersion) {
	parents := map[string]bool{}
	for _, p := range r.parents {
		parents[p.name] = true
	}
	check := func(path, s string) {
		if !strings.Contains(s, "${") {
			return
		}
		for _, m := range parentExpr.FindAllStringSubmatch(s, -1) {
			role, _, _ := strings.Cut(m[1], ".")
			switch {
			case parents[role]:
			case !names[role]:
				c.ps.errorf(path, `%q: %q is not a role of this service: OneFlow replaces the reference with "" (Role#evaluate)`, m[0], role)
			default:
				c.ps.errorf(path, `%q: role %q is not among the parents of role %q: OneFlow replaces the reference with "" (Role#evaluate); add %q to its parents`, m[0], role, r.name, role)
			}
		}
	}
	key := "template_contents"
	if v == Version6 {
		key = "vm_template_contents"
	}
	if tc, ok := r.node.get(key); ok {
		eachString(tc, check)
	}
}

// eachString calls f with every string in n (n itself, or inside its
// objects and arrays) and its path.
func eachString(n jnode, f func(path, s string)) {
	switch x := n.v.(type) {
	case string:
		f(n.path, x)
	case map[string]any:
		for _, k := range n.keys() {
			eachString(jnode{x[k], childPath(n.path, k)}, f)
		}
	case []any:
		for i := range x {
			eachString(n.index(i), f)
		}
	}
}
