package register

import (
	"encoding/xml"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// flowRequest is one request the fake OneFlow saw.
type flowRequest struct {
	Method, Path, User, Password, ContentType, Body string
}

// fakeOneFlow is an in-process OneFlow REST server: it records every
// request and answers from its fields.
type fakeOneFlow struct {
	mu       sync.Mutex
	requests []flowRequest
	pool     string // GET /service_template answer
	createID int
	fail     string // non-empty: POST/PUT answer 400 with this text
}

func (f *fakeOneFlow) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	user, pass, _ := r.BasicAuth()
	f.mu.Lock()
	f.requests = append(f.requests, flowRequest{r.Method, r.URL.Path, user, pass, r.Header.Get("Content-Type"), string(body)})
	f.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/service_template":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, f.pool)
	case f.fail != "":
		// OneFlow's errors are plain text.
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, f.fail)
	case r.Method == http.MethodPost && r.URL.Path == "/service_template":
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"DOCUMENT":{"ID":"%d","NAME":"x","TEMPLATE":{"BODY":%s}}}`, f.createID, body)
	case r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/service_template/"):
		fmt.Fprint(w, `{}`)
	default:
		http.Error(w, "unexpected request", http.StatusNotFound)
	}
}

func (f *fakeOneFlow) writes() []flowRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []flowRequest
	for _, r := range f.requests {
		if r.Method != http.MethodGet {
			out = append(out, r)
		}
	}
	return out
}

// rpcCall is one XML-RPC call the fake oned saw, params as text.
type rpcCall struct {
	Method string
	Params []string
}

// fakeOned is an in-process oned XML-RPC endpoint. It decodes each
// methodCall and answers from its fields.
type fakeOned struct {
	t        *testing.T
	mu       sync.Mutex
	calls    []rpcCall
	pool     string // one.templatepool.info body (XML)
	nextID   int
	failWith string
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

func (f *fakeOned) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var mc xmlMethodCall
	if err := xml.NewDecoder(r.Body).Decode(&mc); err != nil {
		f.t.Errorf("fake oned: not an XML-RPC methodCall: %v", err)
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	call := rpcCall{Method: mc.Name}
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
	f.calls = append(f.calls, call)
	f.mu.Unlock()
	if f.failWith != "" {
		writeRPC(w, false, "<string>"+html.EscapeString(f.failWith)+"</string>")
		return
	}
	switch mc.Name {
	case "one.templatepool.info":
		writeRPC(w, true, "<string>"+html.EscapeString(f.pool)+"</string>")
	case "one.template.allocate":
		f.mu.Lock()
		id := f.nextID
		f.nextID++
		f.mu.Unlock()
		writeRPC(w, true, fmt.Sprintf("<i4>%d</i4>", id))
	case "one.template.update":
		writeRPC(w, true, "<i4>"+call.Params[1]+"</i4>")
	default:
		f.t.Errorf("fake oned: unexpected method %s", mc.Name)
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

func (f *fakeOned) methods() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.Method)
	}
	return out
}

func vmPool(docs ...Document) string {
	var b strings.Builder
	b.WriteString("<VMTEMPLATE_POOL>")
	for _, d := range docs {
		fmt.Fprintf(&b, "<VMTEMPLATE><ID>%d</ID><UID>0</UID><NAME>%s</NAME><TEMPLATE></TEMPLATE></VMTEMPLATE>", d.ID, d.Name)
	}
	b.WriteString("</VMTEMPLATE_POOL>")
	return b.String()
}

func servers(t *testing.T, flow *fakeOneFlow, oned *fakeOned) (flowURL, onedURL string) {
	fs := httptest.NewServer(flow)
	t.Cleanup(fs.Close)
	os := httptest.NewServer(oned)
	t.Cleanup(os.Close)
	return fs.URL, os.URL + "/RPC2"
}
