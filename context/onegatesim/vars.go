package onegatesim

import (
	"encoding/xml"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// parentRef is OneFlow's ${role.xpath} (6.6+), matched as Role#evaluate
// scans it: /\$\{(.*?)\}/ (src/flow/lib/models/role.rb, release-6.10.5 and
// release-7.4.0).
var parentRef = regexp.MustCompile(`\$\{(.*?)\}`)

// resolveParentRefs is Role#evaluate: the text before the first "." names
// a parent role (any other role, or none, gives ""), the rest is joined
// with "/", upcased and prefixed "//", and the first of that role's VMs
// whose XML has a node there gives the text of the node set, even an empty
// one; no such VM gives "". ${master.vm.id} is //VM/ID; ${master.id} is
// //ID, every <ID> of the VM. OneFlow evaluates the whole extra template:
// 6.x's vm_template_contents, 7.x's template_contents merged over the VM
// template. Callers hold s.mu.
func (s *Sim) resolveParentRefs(v *vm, text string) string {
	if !strings.Contains(text, "${") {
		return text
	}
	return parentRef.ReplaceAllStringFunc(text, func(m string) string {
		segs := strings.Split(parentRef.FindStringSubmatch(m)[1], ".")
		roleName := segs[0]
		if !slices.Contains(v.role.spec.parents, roleName) {
			return ""
		}
		pr := v.svc.role(roleName)
		if pr == nil || len(segs) < 2 {
			// No path: "//", which Nokogiri refuses (not simulated).
			return ""
		}
		path := strings.Split(strings.ToUpper(strings.Join(segs[1:], "/")), "/")
		for _, pv := range pr.nodes {
			if val, ok := xpathValue(s.vmXML(pv), path); ok {
				return val
			}
		}
		return ""
	})
}

// xpathValue is XMLElement#[] with Nokogiri on "//" + path: the text of
// every element at the end of that chain of names, anywhere in the
// document, concatenated in document order; false when there is none.
func xpathValue(doc string, path []string) (string, bool) {
	type frame struct {
		name  string
		match bool // this element ends the path
	}
	var (
		stack []frame
		out   strings.Builder
		open  int // matched elements open around the current token
		found bool
	)
	dec := xml.NewDecoder(strings.NewReader(doc))
	for {
		tok, err := dec.Token()
		if err != nil {
			// io.EOF, or a document vmXML does not make.
			return out.String(), found
		}
		switch t := tok.(type) {
		case xml.StartElement:
			f := frame{name: t.Name.Local}
			if n := len(path); f.name == path[n-1] && len(stack) >= n-1 {
				f.match = true
				for i := 0; i < n-1; i++ {
					if stack[len(stack)-n+1+i].name != path[i] {
						f.match = false
						break
					}
				}
			}
			if f.match {
				found = true
				open++
			}
			stack = append(stack, f)
		case xml.EndElement:
			if stack[len(stack)-1].match {
				open--
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if open > 0 {
				out.Write(t)
			}
		}
	}
}

// onedVar is oned's $NAME or $NAME[SUB] in a CONTEXT value.
var onedVar = regexp.MustCompile(`\$([A-Za-z0-9_]+)(\[([A-Za-z0-9_]+)\])?`)

// resolveVars substitutes oned's context variables from the VM's own
// template; unknown ones become empty, as oned leaves them. Callers hold s.mu.
func (s *Sim) resolveVars(v *vm, text string) string {
	if !strings.Contains(text, "$") {
		return text
	}
	return onedVar.ReplaceAllStringFunc(text, func(m string) string {
		sub := onedVar.FindStringSubmatch(m)
		name, key := strings.ToUpper(sub[1]), strings.ToUpper(sub[3])
		switch name {
		case "VMID":
			return strconv.Itoa(v.id)
		case "NAME":
			if key == "" {
				return v.name
			}
		case "UID":
			return strconv.Itoa(s.owner.id)
		case "GID":
			return "0"
		case "UNAME":
			return s.owner.uname()
		case "GNAME":
			return "oneadmin"
		case "USER":
			// The owner's user template (get_user_attribute).
			if key != "" {
				return s.owner.template[key]
			}
			return ""
		case "NIC":
			switch key {
			case "IP":
				return v.nic.ip.String()
			case "MAC":
				return v.nic.mac
			case "NETWORK":
				return v.netName
			}
			return ""
		}
		for _, list := range [][]attr{v.user, v.system} {
			if a, ok := lookup(list, name); ok {
				if key == "" && !a.isVector() {
					return a.value
				}
				if key != "" && a.isVector() {
					return a.vector[key]
				}
			}
		}
		return ""
	})
}
