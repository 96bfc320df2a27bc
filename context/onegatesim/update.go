package onegatesim

import (
	"errors"
	"net/http"
	"regexp"
	"strings"
)

// restrictedAttrs is the server's default :restricted_attrs:.
var restrictedAttrs = map[string]bool{"SCHED_REQUIREMENTS": true, "SERVICE_ID": true, "ROLE_NAME": true}

var errTrailing = errors.New("unexpected data after the JSON value")

// update is the server's update helper behind PUT /vm and PUT /vms/:id:
// data (form or query) else the raw body, type 1 (merge) or anything else
// (erase), escape_attr, the restricted-attribute check, then oned's
// one.vm.update with its template parser. Callers hold s.mu.
func (s *Sim) update(v *vm, r *http.Request, body []byte) reply {
	ps, form := params(r, body)
	var data string
	switch p := ps["data"]; {
	case p.present && !p.isNil:
		data = p.value
	case form && s.v.less(7, 2):
		// Before 7.2 Rack had consumed a form body and the server read it
		// again without rewinding: a form without "data" updates nothing.
		data = ""
	default:
		data = string(body)
	}
	typ := 1
	if p := ps["type"]; p.present && !p.isNil {
		typ = rubyToI(p.value)
	}
	if s.v.escapes() {
		esc, err := escapeAttr(data, s.v.escapeEqOnce())
		if err != nil {
			return text(http.StatusInternalServerError, msgInternal)
		}
		data = esc
		if typ != 1 && !s.v.escapeEqOnce() {
			data += `"` // 5.12's escaping appended a quote to a bare name: erase was broken
		}
	}
	verb := "cannot be modified"
	if typ != 1 {
		verb = "cannot be deleted"
	}
	for _, line := range strings.Split(data, "\n") {
		key, _, _ := strings.Cut(line, "=")
		if line != "" && restrictedAttrs[strings.ToUpper(key)] {
			return text(http.StatusForbidden, "Attribute ("+key+") "+verb)
		}
	}
	if typ == 1 {
		return s.merge(v, data)
	}
	return s.erase(v, data)
}

// merge is one.vm.update in append mode: parse, then every attribute named
// in the update replaces all of that name. Callers hold s.mu.
func (s *Sim) merge(v *vm, data string) reply {
	attrs, err := parseTemplate(data)
	if err != nil {
		return text(http.StatusInternalServerError, "[one.vm.update] "+err.Error())
	}
	var names []string
	seen := map[string]bool{}
	for _, a := range attrs {
		if !seen[a.name] {
			seen[a.name] = true
			names = append(names, a.name)
			v.user = removeAttr(v.user, a.name)
		}
	}
	v.user = append(v.user, attrs...)
	s.record(EventVMUpdated, v.svc.id, v.id, v.role.spec.name, "keys="+strings.Join(names, ","))
	// OneFlow's subscription strips quotes and spaces from the template text
	// and looks for READY=YES anywhere in it (5.12+).
	if !s.v.readyCaseInsensitive() && strings.Contains(strings.NewReplacer(`"`, "", " ", "").Replace(data), "READY=YES") {
		v.readyEvent = true
	}
	s.noteReady(v)
	return reply{status: http.StatusOK}
}

// xpathName is what Nokogiri accepts after "USER_TEMPLATE/": one element
// or element/child.
var xpathName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*(/[A-Za-z_][A-Za-z0-9_.-]*)?$`)

// erase is delete_element("USER_TEMPLATE/<name>"): exact, case-sensitive,
// every match; nothing removed is "attribute not found". Callers hold s.mu.
func (s *Sim) erase(v *vm, name string) reply {
	if !xpathName.MatchString(name) {
		return text(http.StatusInternalServerError, msgInternal) // an XPath syntax error the server does not catch
	}
	top, sub, nested := strings.Cut(name, "/")
	found := false
	for i := range v.user {
		a := &v.user[i]
		if a.name != top {
			continue
		}
		if !nested {
			found = true
			continue
		}
		if _, ok := a.vector[sub]; ok {
			delete(a.vector, sub)
			found = true
		}
	}
	if !found {
		return text(http.StatusInternalServerError, "attribute not found")
	}
	if !nested {
		v.user = removeAttr(v.user, top)
	}
	s.record(EventVMErased, v.svc.id, v.id, v.role.spec.name, "key="+name)
	s.noteReady(v)
	return reply{status: http.StatusOK}
}

// noteReady records the first READY=YES of a VM and lets OneFlow move on.
// Callers hold s.mu.
func (s *Sim) noteReady(v *vm) {
	if !v.readySeen && s.isReady(v) {
		v.readySeen = true
		s.record(EventVMReady, v.svc.id, v.id, v.role.spec.name, "")
	}
	s.advance(v.svc)
}
