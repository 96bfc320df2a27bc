package onegatesim

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// OnedHandler serves the part of oned's XML-RPC API a user's CLI needs to
// deal with a service's VMs, on the same VMs OneGate serves, so that a test
// can run the real onekube-flow (goca underneath) against the VMs the real
// agent talks to through OneGate:
//
//   - one.vm.info: the VM document (TEMPLATE with CONTEXT and NIC, and
//     USER_TEMPLATE), never decrypted;
//   - one.vm.update: type 1 merges through the same template parser and
//     merge as OneGate's PUT (VirtualMachine::append_template); type 0
//     (replace) is refused as not simulated;
//   - one.vm.updateconf: type 1 merges CONTEXT keys and resolves their
//     variables again, as VirtualMachine::updateconf does in append mode
//     (release-7.4.0); other sections and type 0 are refused;
//   - one.user.info (-1 or the owner's ID) and one.user.update (type 1):
//     the owner (SetOwner);
//   - one.vm.attach (a DISK template String) and one.vm.detach (a DISK_ID):
//     the owner's onevm disk-attach/disk-detach, as OneGate's actions.
//
// Only user:password authenticates, as the VMs' owner. Errors are oned's
// failure triples with its message forms.
func (s *Sim) OnedHandler(user, password string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		call, err := readMethodCall(r.Body)
		if err != nil {
			http.Error(w, "bad XML-RPC request", http.StatusBadRequest)
			return
		}
		if len(call.params) == 0 || call.params[0] != user+":"+password {
			writeRPCResult(w, false, "["+call.method+"] User couldn't be authenticated, aborting call.")
			return
		}
		ok, body := s.onedCall(call)
		writeRPCResult(w, ok, body)
	})
}

type methodCall struct {
	method string
	params []string // scalars as text; booleans as "0"/"1"
}

func readMethodCall(r io.Reader) (methodCall, error) {
	var mc struct {
		Name   string `xml:"methodName"`
		Params []struct {
			Value struct {
				Inner string `xml:",innerxml"`
			} `xml:"value"`
		} `xml:"params>param"`
	}
	if err := xml.NewDecoder(io.LimitReader(r, maxBody)).Decode(&mc); err != nil {
		return methodCall{}, err
	}
	call := methodCall{method: mc.Name}
	for _, p := range mc.Params {
		var v struct {
			XMLName xml.Name
			Text    string `xml:",chardata"`
		}
		inner := strings.TrimSpace(p.Value.Inner)
		if !strings.HasPrefix(inner, "<") {
			call.params = append(call.params, html.UnescapeString(inner)) // an untyped string
			continue
		}
		if err := xml.Unmarshal([]byte(inner), &v); err != nil {
			return methodCall{}, err
		}
		call.params = append(call.params, v.Text)
	}
	return call, nil
}

func (s *Sim) onedCall(c methodCall) (bool, string) {
	arg := func(i int) string {
		if i < len(c.params) {
			return c.params[i]
		}
		return ""
	}
	id, err := strconv.Atoi(arg(1))
	if err != nil {
		return false, "[" + c.method + "] Wrong parameter type"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch c.method {
	case "one.user.info":
		if id != -1 && id != s.owner.id {
			return false, fmt.Sprintf("[one.user.info] Error getting user [%d].", id)
		}
		return true, s.userXML()
	case "one.user.update":
		if id != s.owner.id || arg(3) != "1" {
			return false, "[one.user.update] not simulated: only a merge (type 1) of the owner's template"
		}
		attrs, err := parseTemplate(arg(2))
		if err != nil {
			return false, "[one.user.update] " + err.Error()
		}
		if s.owner.template == nil {
			s.owner.template = map[string]string{}
		}
		for _, a := range attrs {
			if !a.isVector() {
				s.owner.template[a.name] = a.value
			}
		}
		return true, strconv.Itoa(id)
	case "one.image.info":
		if id < 0 || id >= len(s.images) {
			return false, fmt.Sprintf("[one.image.info] Error getting image [%d].", id)
		}
		return true, s.imageXML(s.images[id])
	}
	v := s.vms[id]
	if v == nil {
		return false, fmt.Sprintf("[%s] Error getting virtual machine [%d].", c.method, id)
	}
	switch c.method {
	case "one.vm.info":
		return true, s.vmXML(v)
	case "one.vm.update":
		if arg(3) != "1" {
			return false, "[one.vm.update] not simulated: only a merge (type 1)"
		}
		if rep := s.merge(v, arg(2)); rep.status != http.StatusOK {
			return false, string(rep.body)
		}
		return true, strconv.Itoa(id)
	case "one.vm.attach", "one.vm.detach":
		// The owner's onevm disk-attach / disk-detach: the same disk
		// bookkeeping as OneGate's attachdisk/detachdisk, which call these.
		var rep reply
		if c.method == "one.vm.attach" {
			rep = s.diskAction(v, "attachdisk", arg(2))
		} else {
			rep = s.diskAction(v, "detachdisk", json.Number(arg(2)))
		}
		if rep.status != http.StatusNoContent {
			return false, string(rep.body)
		}
		return true, strconv.Itoa(id)
	case "one.vm.updateconf":
		if err := s.updateConf(v, arg(2), arg(3)); err != nil {
			return false, "[one.vm.updateconf] " + err.Error()
		}
		return true, strconv.Itoa(id)
	}
	return false, "[" + c.method + "] not simulated"
}

// updateConf merges the CONTEXT of text into the VM's, resolving
// variables ($UNAME, $USER[...]) as oned's parse_context does, and
// rewrites the VM's context files (the new context CD).
func (s *Sim) updateConf(v *vm, text, typ string) error {
	if typ != "1" {
		return fmt.Errorf("not simulated: only append (type 1)")
	}
	attrs, err := parseTemplate(text)
	if err != nil {
		return err
	}
	for _, a := range attrs {
		if a.name != "CONTEXT" || !a.isVector() {
			return fmt.Errorf("not simulated: only CONTEXT, not %s", a.name)
		}
		for k, val := range a.vector {
			v.context[k] = s.resolveVars(v, val)
		}
	}
	tok := ""
	if strings.EqualFold(v.context["TOKEN"], "YES") {
		tok = v.token
	}
	_, err = writeContextDir(v.dir, v.context, tok)
	s.record(EventVMUpdated, v.svc.id, v.id, v.role.spec.name, "updateconf")
	return err
}

// imageXML is the one.image.info document: the parts onekube-flow
// upgrade reads (NAME, PERSISTENT, TEMPLATE attributes). Images of the
// simulator are never persistent (a bundle is registered PERSISTENT=NO).
func (s *Sim) imageXML(img Image) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<IMAGE><ID>%d</ID><UID>%d</UID><GID>0</GID><UNAME>%s</UNAME><GNAME>oneadmin</GNAME><NAME>%s</NAME>"+
		"<TYPE>2</TYPE><PERSISTENT>0</PERSISTENT><STATE>%d</STATE><SOURCE>%s</SOURCE><TEMPLATE><DEV_PREFIX>%s</DEV_PREFIX>",
		img.ID, s.owner.id, xmlText(s.owner.uname()), xmlText(img.Name), imageState(img.State), cdata(img.Source), cdata(img.DevPrefix))
	for _, k := range sortedKeys(img.Template) {
		fmt.Fprintf(&b, "<%s>%s</%s>", k, cdata(img.Template[k]), k)
	}
	b.WriteString("</TEMPLATE></IMAGE>")
	return b.String()
}

// vmXML is the one.vm.info document: the parts onekube-flow reads.
func (s *Sim) vmXML(v *vm) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<VM><ID>%d</ID><UID>%d</UID><GID>0</GID><UNAME>%s</UNAME><GNAME>oneadmin</GNAME><NAME>%s</NAME>"+
		"<STATE>%d</STATE><LCM_STATE>%d</LCM_STATE><STIME>%d</STIME><TEMPLATE><CONTEXT>",
		v.id, s.owner.id, xmlText(s.owner.uname()), xmlText(v.name), v.vmState(), v.lcmState(), v.stime.Unix())
	for _, k := range sortedKeys(v.context) {
		fmt.Fprintf(&b, "<%s>%s</%s>", k, cdata(v.context[k]), k)
	}
	b.WriteString("</CONTEXT><NIC>")
	nf := s.nicFields(v)
	for _, k := range sortedKeys(nf) {
		fmt.Fprintf(&b, "<%s>%s</%s>", k, cdata(nf[k]), k)
	}
	fmt.Fprintf(&b, "</NIC><VMID>%d</VMID></TEMPLATE><USER_TEMPLATE>", v.id)
	for _, a := range v.user {
		if !a.isVector() {
			fmt.Fprintf(&b, "<%s>%s</%s>", a.name, cdata(a.value), a.name)
			continue
		}
		fmt.Fprintf(&b, "<%s>", a.name)
		for _, k := range sortedKeys(a.vector) {
			fmt.Fprintf(&b, "<%s>%s</%s>", k, cdata(a.vector[k]), k)
		}
		fmt.Fprintf(&b, "</%s>", a.name)
	}
	b.WriteString("</USER_TEMPLATE></VM>")
	return b.String()
}

func (s *Sim) userXML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "<USER><ID>%d</ID><GID>0</GID><GNAME>oneadmin</GNAME><NAME>%s</NAME><ENABLED>1</ENABLED><TEMPLATE>",
		s.owner.id, xmlText(s.owner.uname()))
	keys := make([]string, 0, len(s.owner.template))
	for k := range s.owner.template {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "<%s>%s</%s>", k, cdata(s.owner.template[k]), k)
	}
	b.WriteString("</TEMPLATE></USER>")
	return b.String()
}

// cdata wraps a value as oned writes template values.
func cdata(s string) string {
	return "<![CDATA[" + strings.ReplaceAll(s, "]]>", "]]]]><![CDATA[>") + "]]>"
}

func xmlText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// writeRPCResult answers with oned's triple: success, the result (or the
// error message), and an error code.
func writeRPCResult(w http.ResponseWriter, ok bool, body string) {
	flag, val := 0, "<string>"+xmlText(body)+"</string>"
	if ok {
		flag = 1
		if _, err := strconv.Atoi(body); err == nil {
			val = "<i4>" + body + "</i4>"
		}
	}
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprintf(w, `<?xml version="1.0"?><methodResponse><params><param><value><array><data>`+
		`<value><boolean>%d</boolean></value><value>%s</value><value><i4>0</i4></value>`+
		`</data></array></value></param></params></methodResponse>`, flag, val)
}

// imageStates are oned's Image::ImageState values by number
// (src/image/Image.h; goca's schemas/image State mirrors them).
var imageStates = []string{"INIT", "READY", "USED", "DISABLED", "LOCKED", "ERROR", "CLONE", "DELETE", "USED_PERS", "LOCKED_USED", "LOCKED_USED_PERS"}

// imageState is the number of state name, READY for "" or a name oned
// does not have.
func imageState(name string) int {
	for i, n := range imageStates {
		if n == name {
			return i
		}
	}
	return 1
}
