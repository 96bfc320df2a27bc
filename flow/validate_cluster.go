package flow

import (
	"regexp"
	"strings"

	vmcontext "github.com/onekube/onekube/context"
)

// cluster runs the checks the server does not do.
func (c *checker) cluster(root jnode, v OneFlowVersion, opts ValidateOptions) {
	roles := collectRoles(root)
	if rs, _ := root.get("roles"); rs.v != nil {
		if arr, ok := rs.arr(); ok && len(arr) == 0 {
			c.ps.warnf(rs.path, "no roles: the service deploys nothing")
		}
	}
	c.graph(root, roles)
	c.masters(root, roles, v)
	c.inputs(root, roles, v)
	nets := c.networks(root)
	names := make(map[string]bool, len(roles))
	for _, r := range roles {
		names[r.name] = true
	}
	for _, r := range roles {
		c.contents(r, v, nets)
		c.parentRefs(r, names, v)
		for _, k := range []string{"template_id", "vm_template"} {
			if id, ok := r.node.get(k); ok {
				if n, ok := (&checker{}).asInt(id); ok && n < 0 {
					c.ps.warnf(id.path, "%d is no VM template: set the role's template ID before instantiating (onekube-flow create registers one)", n)
				}
			}
		}
	}
	c.cidrs(root, v, opts)
	gate, _ := root.get("ready_status_gate")
	if d, _ := root.get("deployment"); d.v == "straight" && gate.v != true {
		for _, r := range roles {
			if len(r.parents) > 0 {
				c.ps.warnf("$.ready_status_gate", "not true: with straight deployment, role %q starts when its parents' VMs boot, not when they report READY (Kubernetes up)", r.name)
				break
			}
		}
	}
	if s, path := inputValue(root, v, vmcontext.KeyNodeName); s != "" {
		if err := checkNodeNamePrefix(s); err != nil {
			c.ps.errorf(path, "%s: %v", vmcontext.KeyNodeName, err)
		}
	}
	c.versionInput(root, roles, v)
	c.autoscaleInput(root, roles, v)
}

// autoscaleInput checks KeyAutoscale's value against the worker role's
// bounds: OneGate's cardinality changes keep min_vms and max_vms
// (VMRole#update with force false, release-7.4.0), so a range beyond them
// makes onekubed's scale steps fail there.
func (c *checker) autoscaleInput(root jnode, roles []roleRef, v OneFlowVersion) {
	s, path := inputValue(root, v, KeyAutoscale)
	lo, hi, on, err := ParseAutoscale(s)
	switch {
	case err != nil:
		c.ps.errorf(path, "%v", err)
		return
	case !on:
		return
	}
	for _, r := range roles {
		if r.name != RoleWorker {
			continue
		}
		rmin, hasMin := (&checker{}).asInt(mustGet(r.node, "min_vms"))
		rmax, hasMax := (&checker{}).asInt(mustGet(r.node, "max_vms"))
		if hasMin && int64(lo) < rmin || hasMax && int64(hi) > rmax {
			c.ps.warnf(path, "%s %d:%d reaches beyond the worker role's min_vms %v and max_vms %v, which OneFlow enforces on every cardinality change: the autoscaler stops at them", KeyAutoscale, lo, hi, mustGet(r.node, "min_vms").v, mustGet(r.node, "max_vms").v)
		}
	}
}

// versionInput warns about ONEAPP_K8S_VERSION in a template rendered before
// the image fixed the Kubernetes release: the agent still reads it, and
// fails early when it differs from the image's kubeadm.
func (c *checker) versionInput(root jnode, roles []roleRef, v OneFlowVersion) {
	key := inputsKey(v)
	holders := []jnode{root}
	for _, r := range roles {
		holders = append(holders, r.node)
	}
	for _, h := range holders {
		for _, k := range []string{key, key + "_values"} {
			if in, ok := h.get(k); ok {
				if val, ok := in.get(vmcontext.KeyVersion); ok {
					c.ps.warnf(val.path, "%s is no longer an input: the image carries one Kubernetes release, and the agent fails early if this names another; drop it", vmcontext.KeyVersion)
				}
			}
		}
	}
}

// inputs checks the syntax of every user input string, service and role.
func (c *checker) inputs(root jnode, roles []roleRef, v OneFlowVersion) {
	key := inputsKey(v)
	holders := []jnode{root}
	for _, r := range roles {
		holders = append(holders, r.node)
	}
	for _, h := range holders {
		ins, ok := h.get(key)
		if _, isObj := ins.obj(); !ok || !isObj {
			continue
		}
		for _, name := range ins.keys() {
			val := mustGet(ins, name)
			s, isStr := val.str()
			if !isStr {
				c.ps.errorf(childPath(ins.path, name), "want a user input string (M|type|description|params|default), got %s", typeName(val.v))
				continue
			}
			_, warns, err := ParseUserInput(name, s)
			if err != nil {
				c.ps.errorf(val.path, "%q: %v", s, err)
			}
			for _, w := range warns {
				c.ps.warnf(val.path, "%s", w)
			}
		}
	}
}

// networks checks the network inputs and their values and returns the
// declared network names.
func (c *checker) networks(root jnode) map[string]bool {
	names := map[string]bool{}
	valued := map[string]bool{}
	if nv, ok := root.get("networks_values"); ok {
		arr, _ := nv.arr()
		for i := range arr {
			e := nv.index(i)
			for _, k := range e.keys() {
				valued[k] = true
			}
		}
	}
	nets, ok := root.get("networks")
	if _, isObj := nets.obj(); !ok || !isObj {
		return names
	}
	for _, name := range nets.keys() {
		names[name] = true
		val := mustGet(nets, name)
		path := childPath(nets.path, name)
		if !rubyWord.MatchString(name) {
			c.ps.errorf(path, "network name %q: NICs reference it as $%s, so only letters, digits and _ work", name, name)
		}
		s, isStr := val.str()
		if !isStr {
			c.ps.errorf(path, "want a network input string (M|network|description||id:N), got %s", typeName(val.v))
			continue
		}
		f := strings.Split(s, "|")
		switch {
		case len(f) != 5:
			c.ps.errorf(path, "%q: want 5 |-separated fields, M|network|description||id:N", s)
		case f[0] != "M" && f[0] != "O":
			c.ps.errorf(path, "%q: first field must be M or O", s)
		case f[1] != "network":
			c.ps.errorf(path, "%q: type must be network", s)
		case !networkDefault.MatchString(f[4]):
			c.ps.errorf(path, "%q: the default must be id:N, template_id:N or reserve_from:N", s)
		case strings.HasSuffix(f[4], ":") && !valued[name]:
			c.ps.warnf(path, "%q has no default network and networks_values does not set it: instantiate must send networks_values for %s, or the NICs get a null network", s, name)
		}
	}
	if nv, ok := root.get("networks_values"); ok {
		arr, _ := nv.arr()
		for i := range arr {
			e := nv.index(i)
			for _, k := range e.keys() {
				c.networkValue(mustGet(e, k), k, names)
			}
		}
	}
	return names
}

var networkDefault = regexp.MustCompile(`^$|^(id|template_id|reserve_from):[0-9]*$`)

func (c *checker) networkValue(v jnode, name string, names map[string]bool) {
	if !names[name] {
		c.ps.errorf(v.path, "%q is not declared in networks", name)
	}
	if _, ok := v.obj(); !ok {
		c.ps.errorf(v.path, "want an object like {\"id\": \"0\"}, got %s", typeName(v.v))
		return
	}
	n := 0
	for _, k := range []string{"id", "template_id", "reserve_from"} {
		if v.has(k) {
			n++
		}
	}
	switch {
	case n != 1:
		c.ps.errorf(v.path, "set exactly one of id, template_id and reserve_from")
	case v.has("reserve_from") && !v.has("extra"):
		c.ps.warnf(v.path, `reserve_from without extra (e.g. "SIZE=10"): the reservation has no size`)
	}
}

var (
	nicNetRef6   = regexp.MustCompile(`NETWORK_ID\s*=\s*"?\$([A-Za-z0-9_]+)`)
	context6     = regexp.MustCompile(`(?m)^\s*CONTEXT\s*=\s*\[`)
	reportReady6 = regexp.MustCompile(`REPORT_READY\s*=\s*"?YES`)
)

// contents checks a role's extra template: NIC shape and network
// references, and the CONTEXT traps.
func (c *checker) contents(r roleRef, v OneFlowVersion, nets map[string]bool) {
	if v == Version6 {
		tc, ok := r.node.get("vm_template_contents")
		s, isStr := tc.str()
		if !ok || !isStr {
			return
		}
		for _, m := range nicNetRef6.FindAllStringSubmatch(s, -1) {
			if !nets[m[1]] {
				c.ps.errorf(tc.path, "NIC network $%s is not declared in networks: oned gets the literal text", m[1])
			}
		}
		if context6.MatchString(s) {
			c.ps.warnf(tc.path, "sets CONTEXT = [...]: in 6.x this replaces the VM template's whole CONTEXT (network, token, SSH key); set top-level KEY = \"$KEY\" lines and reference them from the VM template")
		}
		if reportReady6.MatchString(s) {
			c.ps.warnf(tc.path, reportReadyWarning)
		}
		return
	}
	tc, ok := r.node.get("template_contents")
	if _, isObj := tc.obj(); !ok || !isObj {
		return
	}
	if nic, ok := tc.get("NIC"); ok {
		arr, isArr := nic.arr()
		if !isArr {
			c.ps.errorf(nic.path, "want a list of NICs: a single object makes the deploy fail (resolve_networks)")
		}
		for i := range arr {
			n := nic.index(i)
			id, _ := mustGet(n, "NETWORK_ID").str()
			if name, isRef := strings.CutPrefix(id, "$"); isRef && !nets[name] {
				c.ps.errorf(n.path+".NETWORK_ID", "network $%s is not declared in networks", name)
			}
		}
	}
	if ctx, ok := tc.get("CONTEXT"); ok {
		if _, isObj := ctx.obj(); !isObj {
			c.ps.errorf(ctx.path, "want an object, got %s", typeName(ctx.v))
		} else if rr, ok := ctx.get("REPORT_READY"); ok && rr.v == "YES" {
			c.ps.warnf(rr.path, reportReadyWarning)
		}
	}
}

const reportReadyWarning = `REPORT_READY="YES" makes one-context report READY at boot, long before Kubernetes is up, which releases the child roles too early; onekube-agent reports READY itself`

// cidrs checks the pod and service networks (values, else defaults), the
// node network option and the API server address for overlaps.
func (c *checker) cidrs(root jnode, v OneFlowVersion, opts ValidateOptions) {
	var ranges []namedPrefix
	for _, in := range []struct{ key, what string }{
		{vmcontext.KeyPodsNetwork, "pod network"},
		{vmcontext.KeyServicesNet, "service network"},
	} {
		s, path := inputValue(root, v, in.key)
		if s == "" {
			continue
		}
		p, err := parseCIDR(s)
		if err != nil {
			c.ps.errorf(path, "%s: %v", in.key, err)
			continue
		}
		ranges = append(ranges, namedPrefix{path, in.what, p})
	}
	k8s := ranges
	if opts.NodeNetwork != "" {
		p, err := parseCIDR(opts.NodeNetwork)
		if err != nil {
			c.ps.errorf("node-network", "%v", err)
		} else {
			ranges = append(ranges, namedPrefix{"node-network", "node network", p})
		}
	}
	checkOverlaps(&c.ps, ranges)
	if s, path := inputValue(root, v, vmcontext.KeyAddress); s != "" {
		checkAddress(&c.ps, path, s, k8s)
	}
}
