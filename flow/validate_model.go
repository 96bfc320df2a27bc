package flow

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Keys that only one data model has.
var (
	keys6Role = []string{"vm_template", "vm_template_contents", "custom_attrs", "custom_attrs_values"}
	keys7Role = []string{"type", "template_id", "template_contents", "user_inputs", "user_inputs_values"}
)

// model decides which server rules apply to root, given the version asked
// for (VersionAuto: detect it), and reports what the server would do to the
// document on the way in. It returns the data model to check root against;
// root may be rewritten as the 7.x server rewrites it.
//
// OneFlow 7.4's ServiceTemplate.validate first runs convert_template on an
// "old format" document, one where every role has the key vm_template or
// vm_template_contents (service_template.rb, old_format? and
// convert_template, release-7.4.0): template_id = vm_template.to_i, type =
// "vm", the 6.x keys renamed or dropped. The 6.x server knows none of the 7.x
// keys and requires vm_template.
func (c *checker) model(root jnode, v OneFlowVersion) OneFlowVersion {
	old := oldFormat(root)
	exported := old && exported7(root)
	switch {
	case v == Version6 && (exported || (!old && roles7(root))):
		c.ps.errorf("$", "a 7.x document (roles with type, template_id or template_contents): OneFlow 6.x requires vm_template and ignores the 7.x keys (NICs, sizes, user inputs); render it with --oneflow 6")
		if !exported {
			c.checkMix(root)
		}
		return Version6
	case exported:
		c.ps.warnf("$", "the marketplace-exported form of a 7.x template (every role also has vm_template): the 7.x server takes it as a 6.x document and converts it, each role's template_id becoming its vm_template")
		c.convertExported(root)
		return Version7
	}
	c.checkMix(root)
	if v == Version6 {
		c.ignored7(root)
	}
	switch {
	case v == VersionAuto && old:
		return Version6
	case v == VersionAuto:
		return Version7
	case v == Version7 && old:
		c.ps.warnf("$", "a 6.x document: the 7.x server converts it (vm_template to template_id, vm_template_contents to template_contents, custom_attrs to user_inputs) before checking it")
		c.convert6 = true
		return Version6
	}
	return v
}

// oldFormat is the server's old_format?: every role has the key
// vm_template or vm_template_contents, whatever its value (key?, so null
// counts). A 7.x server converts such documents.
func oldFormat(root jnode) bool {
	roles, ok := root.get("roles")
	arr, isArr := roles.arr()
	if !ok || !isArr || len(arr) == 0 {
		return root.has("custom_attrs") && !root.has("user_inputs")
	}
	for i := range arr {
		r := roles.index(i)
		if !r.hasKey("vm_template") && !r.hasKey("vm_template_contents") {
			return false
		}
	}
	return true
}

// exported7 recognises a 7.x template as OpenNebula's marketplace export
// registers it (marketplaceapp_ext.rb, create_service_template): every role
// gained a vm_template, nothing else of 6.x is there, and some role has 7.x
// keys. Assumes oldFormat(root).
func exported7(root jnode) bool {
	if root.hasKey("custom_attrs") || root.hasKey("custom_attrs_values") {
		return false
	}
	roles, _ := root.get("roles")
	arr, _ := roles.arr()
	any7 := false
	for i := range arr {
		r := roles.index(i)
		if !r.hasKey("vm_template") {
			return false
		}
		for _, k := range keys6Role[1:] {
			if r.hasKey(k) {
				return false
			}
		}
		any7 = any7 || hasAny(r, keys7Role)
	}
	return any7
}

// roles7 reports a document whose roles are written for 7.x. Service-level
// user inputs alone do not make one: the 6.x server ignores them as it
// ignores any extra key (ignored7), and a document without roles, which
// it accepts, would otherwise be called a 7.x one.
func roles7(root jnode) bool {
	roles, _ := root.get("roles")
	arr, _ := roles.arr()
	for i := range arr {
		if hasAny(roles.index(i), keys7Role) {
			return true
		}
	}
	return false
}

// ignored7 warns about the service-level 7.x keys of a document checked
// against 6.x, whose server keeps but never reads them
// (allow_extra_properties, oneflow.md §2).
func (c *checker) ignored7(root jnode) {
	for _, k := range []string{"user_inputs", "user_inputs_values"} {
		if root.has(k) {
			c.ps.warnf(childPath(root.path, k), "a 7.x key, which OneFlow 6.x ignores (its user inputs are %s)", strings.Replace(k, "user_inputs", "custom_attrs", 1))
		}
	}
}

func hasAny(n jnode, keys []string) bool {
	for _, k := range keys {
		if n.has(k) {
			return true
		}
	}
	return false
}

// convertExported rewrites root's roles as convert_template does (only
// vm_template and type matter for an exported 7.x template) and warns
// where that changes what the role says.
func (c *checker) convertExported(root jnode) {
	roles, _ := root.get("roles")
	arr, _ := roles.arr()
	for i := range arr {
		r := roles.index(i)
		obj, ok := r.obj()
		if !ok {
			continue
		}
		vt := jnode{obj["vm_template"], childPath(r.path, "vm_template")}
		id, ok := c.convertedID(vt)
		if !ok {
			continue
		}
		if t, _ := r.get("type"); t.v == "vr" {
			c.ps.warnf(t.path, `the conversion makes this virtual router role a VM role ("type": "vm")`)
		}
		obj["template_id"] = json.Number(strconv.FormatInt(id, 10))
		obj["type"] = "vm"
		delete(obj, "vm_template")
	}
}

// convertedID is Ruby's vm_template.to_i as convert_template applies it,
// with a warning where the result is not what the value seems to say and an
// error where Ruby has no to_i (the conversion fails).
func (c *checker) convertedID(vt jnode) (int64, bool) {
	switch x := vt.v.(type) {
	case nil:
		c.ps.warnf(vt.path, "null: the 7.x server converts it to template_id 0, which is rarely the VM template meant")
		return 0, true
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i, true
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil || math.IsInf(f, 0) || f >= math.MaxInt64 || f <= math.MinInt64 {
			c.ps.errorf(vt.path, "%s is not a VM template ID", x)
			return 0, false
		}
		c.ps.warnf(vt.path, "%s is not an integer: the 7.x server converts it to template_id %d", x, int64(f))
		return int64(f), true
	case string:
		i, exact := rubyToI(x)
		if !exact {
			c.ps.warnf(vt.path, "%q is not a number: the 7.x server converts it to template_id %d", x, i)
		}
		return i, true
	}
	c.ps.errorf(vt.path, "want the VM template ID (an integer), got %s: the 7.x server cannot convert it", typeName(vt.v))
	return 0, false
}

// rubyToI is Ruby's String#to_i: optional blanks and sign, then digits
// (single underscores between them allowed), the rest ignored; 0 without
// digits. exact says whether the whole string was a plain integer.
func rubyToI(s string) (n int64, exact bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] >= '\t' && s[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
digits:
	for ; i < len(s); i++ {
		switch {
		case s[i] >= '0' && s[i] <= '9':
			if n < math.MaxInt64/10 { // Ruby has bignums; saturate instead
				n = n*10 + int64(s[i]-'0')
			}
		case s[i] == '_' && i > start && s[i-1] != '_' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
		default:
			break digits
		}
	}
	if neg {
		n = -n
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// checkMix reports documents that mix 6.x and 7.x keys: the 7.x server
// converts only all-6.x documents, the 6.x server ignores 7.x keys.
func (c *checker) checkMix(root jnode) {
	if root.has("custom_attrs") && root.has("user_inputs") {
		c.ps.errorf("$", "mixes 6.x custom_attrs and 7.x user_inputs: use one data model")
	}
	roles, _ := root.get("roles")
	arr, _ := roles.arr()
	var six, seven []string
	for i := range arr {
		r := roles.index(i)
		var has6, has7 []string
		for _, k := range keys6Role {
			if r.has(k) {
				has6 = append(has6, k)
			}
		}
		for _, k := range keys7Role {
			if r.has(k) {
				has7 = append(has7, k)
			}
		}
		if len(has6) > 0 && len(has7) > 0 {
			if len(has6) == 1 && has6[0] == "vm_template" && r.has("type") && r.has("template_id") {
				// Not every role has one, so the 7.x server reads the
				// document as 7.x and never looks at it: harmless.
				c.ps.warnf(childPath(r.path, "vm_template"), "ignored: the 7.x server converts a document only when every role has vm_template, so this role's template_id is used")
				has6 = nil
			} else {
				c.ps.errorf(r.path, "mixes 6.x keys (%s) and 7.x keys (%s) in one role", join(has6), join(has7))
			}
		}
		if len(has6) > 0 {
			six = append(six, r.path)
		} else if len(has7) > 0 {
			seven = append(seven, r.path)
		}
	}
	if len(six) > 0 && len(seven) > 0 {
		c.ps.errorf("$.roles", "6.x roles (%s) next to 7.x roles (%s): the 7.x server converts a document only when every role is 6.x", joinFew(six), joinFew(seven))
	}
}

// joinFew joins paths, naming at most a few: a message stays one short line
// whatever the document's size.
func joinFew(ss []string) string {
	const few = 5
	if len(ss) <= few {
		return join(ss)
	}
	return join(ss[:few]) + ", … " + strconv.Itoa(len(ss)-few) + " more"
}
