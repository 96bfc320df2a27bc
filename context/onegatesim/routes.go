package onegatesim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Route patterns, as Stats and Fault.Routes name them.
const (
	RouteRoot        = "GET /"
	RouteGetVM       = "GET /vm"
	RoutePutVM       = "PUT /vm"
	RouteGetService  = "GET /service"
	RouteGetVRouter  = "GET /vrouter"
	RouteGetVNet     = "GET /vnet/:id"
	RouteGetVMByID   = "GET /vms/:id"
	RoutePutVMByID   = "PUT /vms/:id"
	RouteVMAction    = "POST /vms/:id/action"
	RouteScaleRole   = "PUT /service/role/:role"
	RouteUnsupported = "other"
)

// Error texts of the OneGate server.
const (
	msgNotAuthorized = "Not authorized"
	msgUnsupported   = "OneGate server doesn't support this feature"
	msgNotFound510   = "<h1>Not Found</h1>" // Sinatra without the 6.0 catch-all
)

const maxBody = 8 << 20

type reply struct {
	status int
	body   []byte
	ctype  string // "": the JSON type the server's before filter sets
}

func text(status int, msg string) reply { return reply{status: status, body: []byte(msg)} }

func jsonReply(v any) reply {
	b, err := marshal(v)
	if err != nil {
		return text(http.StatusInternalServerError, "onegatesim: rendering JSON: "+err.Error())
	}
	return reply{status: http.StatusOK, body: b}
}

// match finds the Sinatra route for a request, in the server's order.
func (s *Sim) match(method, escapedPath string) (route, param string) {
	if method == http.MethodHead {
		method = http.MethodGet // Sinatra's get routes answer HEAD too
	}
	segs := strings.Split(strings.TrimPrefix(escapedPath, "/"), "/")
	for i, seg := range segs {
		if u, err := url.PathUnescape(seg); err == nil {
			segs[i] = u
		}
	}
	p := func(n int) bool { return len(segs) == n }
	switch {
	case method == "GET" && escapedPath == "/":
		return RouteRoot, ""
	case p(1) && segs[0] == "vm" && method == "PUT":
		return RoutePutVM, ""
	case p(1) && segs[0] == "vm" && method == "GET":
		return RouteGetVM, ""
	case p(1) && segs[0] == "service" && method == "GET":
		return RouteGetService, ""
	case p(1) && segs[0] == "vrouter" && method == "GET" && s.v.catchAll():
		return RouteGetVRouter, ""
	case p(2) && segs[0] == "vnet" && segs[1] != "" && method == "GET" && s.v.catchAll():
		return RouteGetVNet, segs[1]
	case p(2) && segs[0] == "vms" && segs[1] != "" && method == "GET":
		return RouteGetVMByID, segs[1]
	case p(3) && segs[0] == "vms" && segs[1] != "" && segs[2] == "action" && method == "POST":
		return RouteVMAction, segs[1]
	case p(3) && segs[0] == "service" && segs[1] == "role" && segs[2] != "" && method == "PUT":
		return RouteScaleRole, segs[2]
	case p(2) && segs[0] == "vms" && segs[1] != "" && method == "PUT":
		return RoutePutVMByID, segs[1]
	}
	return RouteUnsupported, ""
}

// permission is the onegate-server.conf key each route checks first.
var permission = map[string]string{
	RouteGetVM: "vm:show", RoutePutVM: "vm:update", RouteGetService: "service:show",
	RouteGetVRouter: "vrouter:show", RouteGetVNet: "vnet:show_by_id", RouteGetVMByID: "vm:show_by_id",
	RoutePutVMByID: "vm:update_by_id", RouteVMAction: "vm:action_by_id", RouteScaleRole: "service:change_cardinality",
}

// claimedVM is the VM a request says it comes from, for counters and faults.
func claimedVM(r *http.Request) int {
	id, err := strconv.Atoi(strings.TrimSpace(r.Header.Get("X-ONEGATE-VMID")))
	if err != nil {
		return UnknownVM
	}
	return id
}

type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

func (s *Sim) serveHTTP(w http.ResponseWriter, r *http.Request) {
	route, param := s.match(r.Method, r.URL.EscapedPath())
	vmid := claimedVM(r)
	cw := &countingWriter{ResponseWriter: w}
	status := 0
	defer func() { s.count(vmid, route, status, cw.n) }()

	delay, term := s.faultsFor(vmid, route)
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return // the client gave up; nothing to answer
		}
	}
	var rep reply
	switch {
	case term != nil && term.Kind == FaultDrop:
		panic(http.ErrAbortHandler) // net/http closes the connection without a response
	case term != nil:
		body := term.Body
		if body == "" {
			body = http.StatusText(term.Status)
		}
		rep = text(term.Status, body)
		rep.ctype = term.ContentType
	default:
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
		if err != nil {
			rep = text(http.StatusBadRequest, "reading request body: "+err.Error())
		} else {
			rep = s.dispatch(r, route, param, body)
		}
	}
	status = rep.status
	ctype := rep.ctype
	if ctype == "" {
		ctype = "application/json;charset=utf-8"
	}
	w.Header().Set("Content-Type", ctype)
	if rep.status == http.StatusNoContent {
		w.WriteHeader(rep.status)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(rep.body)))
	w.WriteHeader(rep.status)
	if r.Method != http.MethodHead {
		_, _ = cw.Write(rep.body)
	}
}

func (s *Sim) dispatch(r *http.Request, route, param string, body []byte) reply {
	if route == RouteUnsupported {
		if !s.v.catchAll() {
			return text(http.StatusNotFound, msgNotFound510)
		}
		return text(http.StatusBadRequest, msgUnsupported)
	}
	if perm, ok := permission[route]; ok && s.deny[perm] {
		res, act, _ := strings.Cut(perm, ":")
		return text(http.StatusForbidden, "Action ("+act+") on resource ("+res+") not supported")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	src := s.authenticate(r)
	if src == nil {
		return text(http.StatusUnauthorized, msgNotAuthorized)
	}
	switch route {
	case RouteRoot:
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base := scheme + "://" + r.Host
		return jsonReply(obj{{"vm_info", base + "/vm"}, {"service_info", base + "/service"}})
	case RouteGetVM:
		return jsonReply(s.vmHash(src))
	case RoutePutVM:
		return s.update(src, r, body)
	case RouteGetService:
		return s.getService(r, src, body)
	case RouteGetVRouter:
		return text(http.StatusBadRequest, "Empty or invalid VROUTER_ID")
	case RouteGetVNet:
		if _, err := kernelInteger(param); err != nil {
			return text(http.StatusBadRequest, "Invalid id format (ID: "+param+"). ID must be an integer.")
		}
		return text(http.StatusBadRequest, "Virtual networks information can only be retrieved from Virtual Routers.")
	case RouteGetVMByID:
		target, fail := s.requestedVM(src, param)
		if fail != nil {
			return *fail
		}
		return jsonReply(s.vmHash(target))
	case RoutePutVMByID:
		target, fail := s.requestedVM(src, param)
		if fail != nil {
			return *fail
		}
		return s.update(target, r, body)
	case RouteVMAction:
		target, fail := s.requestedVM(src, param)
		if fail != nil {
			return *fail
		}
		return s.action(r, target, body)
	case RouteScaleRole:
		return s.scaleRole(r, src, param, body)
	}
	return text(http.StatusBadRequest, msgUnsupported)
}

// authenticate is OneGateCloudAuth: the VM named by X-ONEGATE-VMID must
// exist and X-ONEGATE-TOKEN must be its token. Callers hold s.mu.
func (s *Sim) authenticate(r *http.Request) *vm {
	id := claimedVM(r)
	v := s.vms[id]
	if id == UnknownVM || v == nil || v.wrong || r.Header.Get("X-ONEGATE-TOKEN") != v.token {
		return nil
	}
	return v
}

// decodeJSON parses a request body as Ruby's JSON.parse would accept it.
func decodeJSON(body []byte) (any, error) {
	var x any
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errTrailing
	}
	return x, nil
}
