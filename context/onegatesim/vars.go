package onegatesim

import (
	"regexp"
	"strconv"
	"strings"
)

// parentRef is OneFlow's ${role.XPATH} (6.6+), evaluated when a child VM is
// created against the first VM of that parent role that has the value.
var parentRef = regexp.MustCompile(`\$\{([^.}]+)\.([^}]*)\}`)

// resolveParentRefs replaces ${role.xpath}; a role that is not a parent, or
// a path no parent VM has, gives the empty string, as in OneFlow.
// Callers hold s.mu.
func (s *Sim) resolveParentRefs(v *vm, text string) string {
	if !strings.Contains(text, "${") {
		return text
	}
	return parentRef.ReplaceAllStringFunc(text, func(m string) string {
		sub := parentRef.FindStringSubmatch(m)
		roleName, path := sub[1], strings.ToUpper(strings.ReplaceAll(sub[2], ".", "/"))
		isParent := false
		for _, p := range v.role.spec.parents {
			isParent = isParent || p == roleName
		}
		pr := v.svc.role(roleName)
		if !isParent || pr == nil {
			return ""
		}
		for _, pv := range pr.nodes {
			if val := xpathValue(pv, path); val != "" {
				return val
			}
		}
		return ""
	})
}

// xpathValue reads the few paths a template can sensibly ask of a VM.
func xpathValue(v *vm, path string) string {
	switch {
	case strings.HasPrefix(path, "TEMPLATE/CONTEXT/"):
		return v.context[strings.TrimPrefix(path, "TEMPLATE/CONTEXT/")]
	case strings.HasPrefix(path, "USER_TEMPLATE/"):
		if a, ok := lookup(v.user, strings.TrimPrefix(path, "USER_TEMPLATE/")); ok && !a.isVector() {
			return a.value
		}
	case path == "TEMPLATE/NIC/IP":
		return v.nic.ip.String()
	case path == "TEMPLATE/NIC/MAC":
		return v.nic.mac
	case path == "ID":
		return strconv.Itoa(v.id)
	case path == "NAME":
		return v.name
	}
	return ""
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
