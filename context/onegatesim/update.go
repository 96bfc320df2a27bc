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
// one.vm.update with its template parser. A raw body in a form-typed
// request is there to read on Rack 2 (up to 6.x, which rewinds after
// parsing the form) and from 7.2 (which rewinds itself), but 7.0 and 7.1
// read nothing. Callers hold s.mu.
func (s *Sim) update(v *vm, r *http.Request, body []byte) reply {
	ps, _ := params(r, body)
	var data string
	switch p := ps["data"]; {
	case p.present && !p.isNil:
		data = p.value
	case s.v.updateRewinds():
		data = string(body)
	default:
		data = string(s.routeBody(r, body))
	}
	typ := 1
	if p := ps["type"]; p.present && !p.isNil {
		typ = rubyToI(p.value)
	}
	if s.v.escapes() {
		esc, err := escapeAttr(data, s.v.escapeEqOnce())
		if err != nil {
			return s.raised(r, &rubyExc{"ArgumentError", err.Error()})
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
	return s.erase(r, v, data)
}

// merge is one.vm.update in append mode (VirtualMachine::append_template,
// Template::merge): parse, erase every attribute the update names, then set
// what it carries, except empty vectors: E=[] erases E and adds nothing.
// Callers hold s.mu.
func (s *Sim) merge(v *vm, data string) reply {
	attrs, err := parseTemplate(data)
	if err != nil {
		return s.halt500("[one.vm.update] " + err.Error())
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
	for _, a := range attrs {
		if !a.isVector() || len(a.vector) > 0 {
			v.user = append(v.user, a)
		}
	}
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
// or element/child, once blanks around the steps are gone (xpathSteps).
var xpathName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*(/[A-Za-z_][A-Za-z0-9_.-]*)?$`)

// xpathBlanks are libxml2's IS_BLANK_CH, which its XPath compiler skips
// before and after each step (xpath.c, xmlXPathCompRelativeLocationPath
// and xmlXPathCompStep): "USER_TEMPLATE/\tROLE_NAME" selects ROLE_NAME.
// The restricted-attribute check compares the name with its blanks, so
// this is the erase form of the bypass (onegate-trust.md).
const xpathBlanks = " \t\r\n"

// xpathSteps drops the blanks libxml2 skips around each step of name.
func xpathSteps(name string) string {
	steps := strings.Split(name, "/")
	for i, st := range steps {
		steps[i] = strings.Trim(st, xpathBlanks)
	}
	return strings.Join(steps, "/")
}

// erase is delete_element("USER_TEMPLATE/<name>"): exact, case-sensitive,
// every match; nothing removed is "attribute not found". Callers hold s.mu.
func (s *Sim) erase(r *http.Request, v *vm, name string) reply {
	if steps := xpathSteps(name); xpathName.MatchString(steps) {
		name = steps
	} else {
		// Nokogiri's XPath::SyntaxError, which the server does not catch
		// (libxml2 words the message; this is its usual form).
		return s.raised(r, &rubyExc{"Nokogiri::XML::XPath::SyntaxError", "ERROR: Invalid expression: USER_TEMPLATE/" + name})
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
		return s.halt500("attribute not found")
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
