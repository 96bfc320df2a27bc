package flow

import (
	"strings"

	vmcontext "github.com/onekube/onekube/context"
)

// roleRef is what the cluster checks need of a role.
type roleRef struct {
	node    jnode
	name    string
	card    int64
	parents []parentRef
}

type parentRef struct {
	name string
	path string
}

func collectRoles(root jnode) []roleRef {
	roles, _ := root.get("roles")
	arr, _ := roles.arr()
	out := make([]roleRef, 0, len(arr))
	for i := range arr {
		r := roles.index(i)
		if _, ok := r.obj(); !ok {
			continue
		}
		ref := roleRef{node: r}
		if n, ok := r.get("name"); ok {
			ref.name, _ = n.str()
		}
		if cn, ok := r.get("cardinality"); ok {
			ref.card, _ = (&checker{}).asInt(cn)
		}
		if pa, ok := r.get("parents"); ok {
			ps, _ := pa.arr()
			for j := range ps {
				p := pa.index(j)
				if s, ok := p.str(); ok {
					ref.parents = append(ref.parents, parentRef{s, p.path})
				}
			}
		}
		out = append(out, ref)
	}
	return out
}

// graph checks the parents: they must exist and must not form a cycle; with
// "straight" a role waits for all its parents to be RUNNING, so a missing or
// cyclic parent means the role, and every role below it, never deploys and
// the service stays DEPLOYING forever. Linear in roles plus parents, so a
// hostile document of 20 000 chained roles is checked in milliseconds.
func (c *checker) graph(root jnode, roles []roleRef) {
	deployment := "none"
	if d, ok := root.get("deployment"); ok {
		deployment, _ = d.str()
	}
	straight := deployment == "straight"
	index := map[string]int{}
	for i, r := range roles {
		if _, dup := index[r.name]; !dup && r.name != "" {
			index[r.name] = i
		}
	}
	anyParents := false
	broken := make([]bool, len(roles))
	edges := make([][]int, len(roles))
	for i, r := range roles {
		for _, p := range r.parents {
			anyParents = true
			j, ok := index[p.name]
			if ok {
				edges[i] = append(edges[i], j)
				continue
			}
			if straight {
				c.ps.errorf(p.path, "parent %q is not a role of this service: role %q never deploys", p.name, r.name)
			} else {
				c.ps.errorf(p.path, "parent %q is not a role of this service", p.name)
			}
			broken[i] = true
		}
	}
	c.cycles(roles, edges, broken)
	if !straight {
		if anyParents && deployment == "none" {
			c.ps.warnf("$.deployment", `parents are ignored with deployment "none": every role starts at once`)
		}
		return
	}
	// Propagate: a role below one that never deploys never deploys either.
	// Breadth-first from the broken roles down to their children; each
	// newly reached role names its first parent that never deploys.
	children := make([][]int, len(roles))
	var queue []int
	for i := range roles {
		for _, j := range edges[i] {
			children[j] = append(children[j], i)
		}
		if broken[i] {
			queue = append(queue, i)
		}
	}
	initially := append([]bool(nil), broken...)
	for len(queue) > 0 {
		j := queue[0]
		queue = queue[1:]
		for _, i := range children[j] {
			if !broken[i] {
				broken[i] = true
				queue = append(queue, i)
			}
		}
	}
	for i, r := range roles {
		if !broken[i] || initially[i] {
			continue
		}
		for _, p := range r.parents {
			if j, ok := index[p.name]; ok && broken[j] {
				c.ps.errorf(p.path, "role %q never deploys: it waits for %q, which never deploys", r.name, p.name)
				break
			}
		}
	}
}

// cycles reports every role on a cycle of parents and marks it broken. Each
// cycle is spelled from the role's own point of view; a role of a tangle
// that the reported cycle does not pass through names that cycle's first
// role instead.
func (c *checker) cycles(roles []roleRef, edges [][]int, broken []bool) {
	comp, cyclic := components(edges)
	type shownCycle struct {
		first int         // the role the cycle was found from
		names []string    // role names, first == last
		pos   map[int]int // role -> position on the cycle
	}
	shown := map[int]*shownCycle{} // by component
	for i, r := range roles {
		if !cyclic[comp[i]] {
			continue
		}
		broken[i] = true
		sc := shown[comp[i]]
		if sc == nil {
			cyc := cycleThrough(edges, comp, i)
			sc = &shownCycle{first: i, names: make([]string, len(cyc)), pos: make(map[int]int, len(cyc))}
			for n, j := range cyc {
				sc.names[n] = roles[j].name
				if n < len(cyc)-1 {
					sc.pos[j] = n
				}
			}
			shown[comp[i]] = sc
		}
		path := r.node.path + ".parents"
		k, on := sc.pos[i]
		if !on {
			c.ps.errorf(path, "parents lead into the cycle of role %q (see %s): none of these roles ever deploys",
				roles[sc.first].name, roles[sc.first].node.path)
			continue
		}
		c.ps.errorf(path, "parents form a cycle (%s): none of these roles ever deploys", formatCycle(sc.names, k))
	}
}

// masters finds the control-plane role (ONEAPP_ONEFLOW_MASTER_ROLE, else
// "master") and checks its count: etcd needs an odd number of members.
func (c *checker) masters(root jnode, roles []roleRef, v OneFlowVersion) {
	name, from := masterRoleName(root, roles, v)
	for _, r := range roles {
		if r.name != name {
			continue
		}
		path := r.node.path + ".cardinality"
		if r.card == 0 {
			c.ps.errorf(path, "role %q is the control plane and has no VM", name)
			return
		}
		checkMasterCount(&c.ps, path, int(min(r.card, 1<<20)))
		return
	}
	if from != "" {
		c.ps.errorf(from, "names the master role %q, which is not a role of this service", name)
	}
}

func masterRoleName(root jnode, roles []roleRef, v OneFlowVersion) (name, from string) {
	for _, r := range roles {
		if s, path := contentsValue(r.node, v, vmcontext.KeyMasterRole); s != "" && !strings.HasPrefix(s, "$") {
			return s, path
		}
	}
	if s, path := inputValue(root, v, vmcontext.KeyMasterRole); s != "" {
		return s, path
	}
	return RoleMaster, ""
}

// contentsValue reads a literal KEY from a role's extra template: 7.x
// template_contents (top level or CONTEXT), 6.x vm_template_contents text.
func contentsValue(r jnode, v OneFlowVersion, key string) (string, string) {
	if v == Version6 {
		tc, ok := r.get("vm_template_contents")
		s, _ := tc.str()
		if !ok {
			return "", ""
		}
		for line := range strings.SplitSeq(s, "\n") {
			k, val, ok := strings.Cut(line, "=")
			if ok && strings.TrimSpace(k) == key {
				return strings.Trim(strings.TrimSpace(val), `"`), tc.path
			}
		}
		return "", ""
	}
	tc, ok := r.get("template_contents")
	if !ok {
		return "", ""
	}
	for _, n := range []jnode{tc, mustGet(tc, "CONTEXT")} {
		if val, ok := n.get(key); ok {
			if s, ok := val.str(); ok {
				return s, val.path
			}
		}
	}
	return "", ""
}

func mustGet(n jnode, key string) jnode {
	v, _ := n.get(key)
	return v
}

// inputValue is the effective value of a service user input: its value in
// user_inputs_values (custom_attrs_values), else its default.
func inputValue(root jnode, v OneFlowVersion, key string) (string, string) {
	inputs := inputsKey(v)
	if vals, ok := root.get(inputs + "_values"); ok {
		if val, ok := vals.get(key); ok {
			if s, ok := val.str(); ok {
				return s, val.path
			}
		}
	}
	if ins, ok := root.get(inputs); ok {
		if val, ok := ins.get(key); ok {
			if s, ok := val.str(); ok {
				if f := strings.Split(s, "|"); len(f) == 5 {
					return f[4], val.path
				}
			}
		}
	}
	return "", ""
}

func inputsKey(v OneFlowVersion) string {
	if v == Version6 {
		return "custom_attrs"
	}
	return "user_inputs"
}

// roleCount is the sum of the roles' cardinalities.
func roleCount(roles []roleRef) int64 {
	var n int64
	for _, r := range roles {
		n += r.card
	}
	return n
}
