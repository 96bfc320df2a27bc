// Package registertest has in-process fakes of OneFlow's REST API and oned's
// XML-RPC endpoint that record every request, for tests of register and of
// the CLI.
package registertest

import (
	"encoding/xml"
	"fmt"
	"html"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// FlowRequest is one request the fake OneFlow saw.
type FlowRequest struct {
	Method, Path, User, Password, ContentType, Body string
}

// OneFlow is a fake OneFlow REST server (an http.Handler): it records every
// request and answers from its fields.
type OneFlow struct {
	mu       sync.Mutex
	Requests []FlowRequest
	Pool     string // the GET /service_template answer
	CreateID int    // the ID POST /service_template answers
	Fail     string // non-empty: POST and PUT answer 400 with this text
	// Services is the GET /service answer (a DOCUMENT_POOL).
	Services string
	// Service holds the GET /service/:id answers by ID; other IDs get
	// OneFlow's 404.
	Service map[int]string
}

func (f *OneFlow) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	user, pass, _ := r.BasicAuth()
	f.mu.Lock()
	f.Requests = append(f.Requests, FlowRequest{r.Method, r.URL.Path, user, pass, r.Header.Get("Content-Type"), string(body)})
	f.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/service_template":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, f.Pool)
	case r.Method == http.MethodGet && r.URL.Path == "/service":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, f.Services)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/service/"):
		f.mu.Lock()
		doc, ok := f.Service[atoi(strings.TrimPrefix(r.URL.Path, "/service/"))]
		f.mu.Unlock()
		if !ok {
			http.Error(w, "Error getting document ["+strings.TrimPrefix(r.URL.Path, "/service/")+"].", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, doc)
	case f.Fail != "":
		// OneFlow's errors are plain text.
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, f.Fail)
	case r.Method == http.MethodPost && r.URL.Path == "/service_template":
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"DOCUMENT":{"ID":"%d","NAME":"x","TEMPLATE":{"BODY":%s}}}`, f.CreateID, body)
	case r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/service_template/"):
		fmt.Fprint(w, `{}`)
	default:
		http.Error(w, "unexpected request", http.StatusNotFound)
	}
}

// Writes returns the requests other than GET.
func (f *OneFlow) Writes() []FlowRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []FlowRequest
	for _, r := range f.Requests {
		if r.Method != http.MethodGet {
			out = append(out, r)
		}
	}
	return out
}

// RPCCall is one XML-RPC call the fake oned saw, params as text
// (booleans as "bool:1").
type RPCCall struct {
	Method string
	Params []string
}

// Oned is a fake oned XML-RPC endpoint (an http.Handler). It decodes each
// methodCall, records it, and answers from its fields; a call it cannot
// decode or does not know is recorded in Bad.
type Oned struct {
	mu    sync.Mutex
	Calls []RPCCall
	Bad   []string
	// Pool is the whole VM template pool (XML, see VMPool);
	// one.templatepool.info answers the part its filter selects, as oned
	// does: -3 the caller's, -2 and -1 all (this fake has no groups), N
	// user N's.
	Pool string
	// UserID is the caller's user ID (one.user.info -1, the -3 filter);
	// UserName its name, else the user part of the session string.
	UserID   int
	UserName string
	// IgnoreFilter answers the whole pool whatever the filter, like a
	// lenient stand-in or a misbehaving proxy would.
	IgnoreFilter bool
	NextID       int    // the ID the next one.template.allocate answers
	FailWith     string // non-empty: every call fails with this message
	// VMs holds the one.vm.info answers (XML, see VMXML) by VM ID; other
	// IDs fail as oned does.
	VMs map[int]string
	// UserTemplate is the caller's user template in one.user.info;
	// one.user.update merges its KEY = "value" lines into it.
	UserTemplate map[string]string
	// Groups is the VM group pool (XML, see VMGroupPool); filters as
	// Pool's.
	Groups string
	// FailMethod fails just the named methods with their message.
	FailMethod map[string]string
}

type xmlMethodCall struct {
	Name   string `xml:"methodName"`
	Params []struct {
		Value struct {
			String  *string `xml:"string"`
			Int     *string `xml:"int"`
			I4      *string `xml:"i4"`
			Boolean *string `xml:"boolean"`
			Bare    string  `xml:",chardata"`
		} `xml:"value"`
	} `xml:"params>param"`
}

func (f *Oned) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var mc xmlMethodCall
	if err := xml.NewDecoder(r.Body).Decode(&mc); err != nil {
		f.mu.Lock()
		f.Bad = append(f.Bad, "not an XML-RPC methodCall: "+err.Error())
		f.mu.Unlock()
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	call := RPCCall{Method: mc.Name}
	for _, p := range mc.Params {
		v := p.Value
		switch {
		case v.String != nil:
			call.Params = append(call.Params, *v.String)
		case v.Int != nil:
			call.Params = append(call.Params, *v.Int)
		case v.I4 != nil:
			call.Params = append(call.Params, *v.I4)
		case v.Boolean != nil:
			call.Params = append(call.Params, "bool:"+*v.Boolean)
		default:
			call.Params = append(call.Params, v.Bare)
		}
	}
	f.mu.Lock()
	f.Calls = append(f.Calls, call)
	f.mu.Unlock()
	if f.FailWith != "" {
		writeRPC(w, false, "<string>"+html.EscapeString(f.FailWith)+"</string>")
		return
	}
	if msg, ok := f.FailMethod[mc.Name]; ok {
		writeRPC(w, false, "<string>"+html.EscapeString(msg)+"</string>")
		return
	}
	switch mc.Name {
	case "one.templatepool.info":
		filter := atoi(call.Params[1])
		if f.IgnoreFilter {
			filter = -2
		}
		pool, err := filterPool(f.Pool, filter, f.UserID)
		if err != nil {
			writeRPC(w, false, "<string>"+html.EscapeString(err.Error())+"</string>")
			return
		}
		writeRPC(w, true, "<string>"+html.EscapeString(pool)+"</string>")
	case "one.user.info":
		if call.Params[1] != "-1" && atoi(call.Params[1]) != f.UserID {
			writeRPC(w, false, "<string>[one.user.info] Error getting user ["+html.EscapeString(call.Params[1])+"].</string>")
			return
		}
		name := f.UserName
		if name == "" {
			name, _, _ = strings.Cut(call.Params[0], ":")
		}
		var tmpl strings.Builder
		f.mu.Lock()
		for _, k := range slices.Sorted(maps.Keys(f.UserTemplate)) {
			fmt.Fprintf(&tmpl, "<%s>%s</%s>", k, html.EscapeString(f.UserTemplate[k]), k)
		}
		f.mu.Unlock()
		writeRPC(w, true, "<string>"+html.EscapeString(fmt.Sprintf("<USER><ID>%d</ID><GID>0</GID><GNAME>oneadmin</GNAME><NAME>%s</NAME><ENABLED>1</ENABLED><TEMPLATE>%s</TEMPLATE></USER>",
			f.UserID, html.EscapeString(name), tmpl.String()))+"</string>")
	case "one.user.update":
		f.mu.Lock()
		if f.UserTemplate == nil {
			f.UserTemplate = map[string]string{}
		}
		for _, line := range strings.Split(call.Params[2], "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				f.UserTemplate[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"`)
			}
		}
		f.mu.Unlock()
		writeRPC(w, true, "<i4>"+call.Params[1]+"</i4>")
	case "one.template.allocate":
		f.mu.Lock()
		id := f.NextID
		f.NextID++
		f.mu.Unlock()
		writeRPC(w, true, fmt.Sprintf("<i4>%d</i4>", id))
	case "one.vm.info":
		f.mu.Lock()
		doc, ok := f.VMs[atoi(call.Params[1])]
		f.mu.Unlock()
		if !ok {
			writeRPC(w, false, "<string>[one.vm.info] Error getting virtual machine ["+html.EscapeString(call.Params[1])+"].</string>")
			return
		}
		writeRPC(w, true, "<string>"+html.EscapeString(doc)+"</string>")
	case "one.template.update", "one.template.delete", "one.vmgroup.delete":
		writeRPC(w, true, "<i4>"+call.Params[1]+"</i4>")
	case "one.vmgroup.allocate":
		f.mu.Lock()
		id := f.NextID
		f.NextID++
		f.mu.Unlock()
		writeRPC(w, true, fmt.Sprintf("<i4>%d</i4>", id))
	case "one.vmgrouppool.info":
		pool, err := filterPool(strings.ReplaceAll(strings.ReplaceAll(f.Groups, "VM_GROUP_POOL>", "VMTEMPLATE_POOL>"), "VM_GROUP>", "VMTEMPLATE>"), atoi(call.Params[1]), f.UserID)
		if err != nil {
			writeRPC(w, false, "<string>"+html.EscapeString(err.Error())+"</string>")
			return
		}
		pool = strings.ReplaceAll(strings.ReplaceAll(pool, "VMTEMPLATE_POOL>", "VM_GROUP_POOL>"), "VMTEMPLATE>", "VM_GROUP>")
		writeRPC(w, true, "<string>"+html.EscapeString(pool)+"</string>")
	default:
		f.mu.Lock()
		f.Bad = append(f.Bad, "unexpected method "+mc.Name)
		f.mu.Unlock()
		writeRPC(w, false, "<string>unknown method</string>")
	}
}

func writeRPC(w http.ResponseWriter, ok bool, body string) {
	b := 0
	if ok {
		b = 1
	}
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprintf(w, `<?xml version="1.0"?><methodResponse><params><param><value><array><data>`+
		`<value><boolean>%d</boolean></value><value>%s</value><value><i4>0</i4></value>`+
		`</data></array></value></param></params></methodResponse>`, b, body)
}

// Methods returns the method names called, in order.
func (f *Oned) Methods() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.Calls {
		out = append(out, c.Method)
	}
	return out
}

// VMTemplate is a pool entry for VMPool, owned by user UID.
type VMTemplate struct {
	ID   int
	Name string
	UID  int
}

// VMPool is a VMTEMPLATE_POOL document holding templates.
func VMPool(templates ...VMTemplate) string {
	var b strings.Builder
	b.WriteString("<VMTEMPLATE_POOL>")
	for _, d := range templates {
		fmt.Fprintf(&b, "<VMTEMPLATE><ID>%d</ID><UID>%d</UID><UNAME>user%d</UNAME><NAME>%s</NAME><TEMPLATE></TEMPLATE></VMTEMPLATE>",
			d.ID, d.UID, d.UID, html.EscapeString(d.Name))
	}
	b.WriteString("</VMTEMPLATE_POOL>")
	return b.String()
}

// VMGroup is a pool entry for VMGroupPool: Roles maps role names to
// policies.
type VMGroup struct {
	ID    int
	Name  string
	UID   int
	Roles map[string]string
}

// VMGroupPool is a VM_GROUP_POOL document holding groups.
func VMGroupPool(groups ...VMGroup) string {
	var b strings.Builder
	b.WriteString("<VM_GROUP_POOL>")
	for _, g := range groups {
		fmt.Fprintf(&b, "<VM_GROUP><ID>%d</ID><UID>%d</UID><UNAME>user%d</UNAME><NAME>%s</NAME><ROLES>", g.ID, g.UID, g.UID, html.EscapeString(g.Name))
		i := 0
		for _, name := range slices.Sorted(maps.Keys(g.Roles)) {
			fmt.Fprintf(&b, "<ROLE><ID>%d</ID><NAME>%s</NAME><POLICY>%s</POLICY></ROLE>", i, html.EscapeString(name), html.EscapeString(g.Roles[name]))
			i++
		}
		b.WriteString("</ROLES><TEMPLATE></TEMPLATE></VM_GROUP>")
	}
	b.WriteString("</VM_GROUP_POOL>")
	return b.String()
}

// filterPool applies a pool filter flag to a VMTEMPLATE_POOL document.
func filterPool(pool string, filter, me int) (string, error) {
	if pool == "" {
		return "<VMTEMPLATE_POOL></VMTEMPLATE_POOL>", nil
	}
	var doc struct {
		Templates []struct {
			Raw string `xml:",innerxml"`
			UID int    `xml:"UID"`
		} `xml:"VMTEMPLATE"`
	}
	if err := xml.Unmarshal([]byte(pool), &doc); err != nil {
		return "", fmt.Errorf("fake oned: bad Pool: %w", err)
	}
	var b strings.Builder
	b.WriteString("<VMTEMPLATE_POOL>")
	for _, t := range doc.Templates {
		keep := filter == -2 || filter == -1 || (filter == -3 && t.UID == me) || (filter >= 0 && t.UID == filter)
		if keep {
			b.WriteString("<VMTEMPLATE>" + t.Raw + "</VMTEMPLATE>")
		}
	}
	b.WriteString("</VMTEMPLATE_POOL>")
	return b.String(), nil
}

// atoi is strconv.Atoi with -1 for anything else, an ID no fake holds.
func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// VM describes a one.vm.info answer for VMXML.
type VM struct {
	ID           int
	Name         string
	State, LCM   int // oned's numbers: 3, 3 is ACTIVE/RUNNING
	IP           string
	UserTemplate map[string]string
}

// VMXML is a VM document as one.vm.info returns it, reduced to what
// status reads.
func VMXML(v VM) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<VM><ID>%d</ID><UID>0</UID><NAME>%s</NAME><STATE>%d</STATE><LCM_STATE>%d</LCM_STATE><TEMPLATE>",
		v.ID, html.EscapeString(v.Name), v.State, v.LCM)
	if v.IP != "" {
		fmt.Fprintf(&b, "<NIC><NIC_ID>0</NIC_ID><IP>%s</IP></NIC>", html.EscapeString(v.IP))
	}
	b.WriteString("</TEMPLATE><USER_TEMPLATE>")
	keys := make([]string, 0, len(v.UserTemplate))
	for k := range v.UserTemplate {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "<%s>%s</%s>", k, html.EscapeString(v.UserTemplate[k]), k)
	}
	b.WriteString("</USER_TEMPLATE></VM>")
	return b.String()
}
