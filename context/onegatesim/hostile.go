package onegatesim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
)

// Hostile is a VM of a service in an attacker's hands: root on it gives
// its OneGate token and nothing else (docs/trust.md, threat model). Every
// method sends what a script on that VM could send, through the simulator's
// own OneGate routes with that VM's token, so the same-service check, the
// restricted-attribute check, Options.Deny and injected faults all apply.
// What the real server allows with the default onegate-server.conf is in
// shared/reference/onegate-trust.md.
type Hostile struct {
	s     *Sim
	vmid  int
	token string
}

// Refused is a OneGate answer outside 2xx to a Hostile request.
type Refused struct {
	Route  string // e.g. "PUT /vms/101"
	Status int
	Body   string
}

func (e *Refused) Error() string {
	return fmt.Sprintf("onegatesim: %s: %d %s", e.Route, e.Status, e.Body)
}

// Hostile returns the actor for VM vmid, holding its token as of now.
func (s *Sim) Hostile(vmid int) (*Hostile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.vms[vmid]
	if v == nil {
		return nil, fmt.Errorf("%w: %d", ErrUnknownVM, vmid)
	}
	return &Hostile{s: s, vmid: vmid, token: v.token}, nil
}

// BypassSpelling is how Hostile writes a restricted attribute: a leading tab
// hides the name from check_restricted_attrs, and oned's parser skips it.
func BypassSpelling(key, value string) string { return "\t" + key + "=" + value }

// WriteSibling merges key=value into VM id's USER_TEMPLATE (PUT /vms/:id,
// vm.update_by_id).
func (h *Hostile) WriteSibling(id int, key, value string) error {
	return h.put("/vms/"+strconv.Itoa(id), key+"="+value, 1)
}

// EraseSibling deletes key from VM id's USER_TEMPLATE (PUT /vms/:id, type=2).
func (h *Hostile) EraseSibling(id int, key string) error {
	return h.put("/vms/"+strconv.Itoa(id), key, 2)
}

// BypassSet sets a restricted attribute (ROLE_NAME, SERVICE_ID,
// SCHED_REQUIREMENTS) in the actor's own USER_TEMPLATE (PUT /vm).
func (h *Hostile) BypassSet(key, value string) error {
	return h.put("/vm", BypassSpelling(key, value), 1)
}

// BypassSetSibling does BypassSet to VM id (PUT /vms/:id).
func (h *Hostile) BypassSetSibling(id int, key, value string) error {
	return h.put("/vms/"+strconv.Itoa(id), BypassSpelling(key, value), 1)
}

// Put sends data as PUT /vm (id < 0) or PUT /vms/:id with the given update
// type (1 merge, 2 erase), as the stock client's form body: any spelling.
func (h *Hostile) Put(id int, data string, typ int) error {
	path := "/vm"
	if id >= 0 {
		path = "/vms/" + strconv.Itoa(id)
	}
	return h.put(path, data, typ)
}

func (h *Hostile) put(path, data string, typ int) error {
	body := url.Values{"data": {data}, "type": {strconv.Itoa(typ)}}.Encode()
	_, err := h.do(http.MethodPut, path, "application/x-www-form-urlencoded", body)
	return err
}

// Action performs a VM action on VM id (POST /vms/:id/action,
// vm.action_by_id): terminate, poweroff, rename... (reboot is refused by
// the default :restricted_actions:).
func (h *Hostile) Action(id int, name string) error {
	b, err := json.Marshal(map[string]any{"action": map[string]string{"perform": name}})
	if err != nil {
		return err
	}
	_, err = h.do(http.MethodPost, "/vms/"+strconv.Itoa(id)+"/action", "application/json", string(b))
	return err
}

// Scale sets the cardinality of a role of the actor's service
// (PUT /service/role/:role, service.change_cardinality).
func (h *Hostile) Scale(role string, n int) error {
	_, err := h.do(http.MethodPut, "/service/role/"+url.PathEscape(role), "application/json", `{"cardinality":`+strconv.Itoa(n)+`}`)
	return err
}

// SiblingView is one VM of GET /service?extended=true, as every VM of the
// service reads it: scalar attributes only.
type SiblingView struct {
	ID           int
	Role         string
	Context      map[string]string // TEMPLATE/CONTEXT
	UserTemplate map[string]string
}

// ReadExtended reads every VM of the actor's service, CONTEXT included
// (GET /service?extended=true, service.show).
func (h *Hostile) ReadExtended() ([]SiblingView, error) {
	body, err := h.do(http.MethodGet, "/service?extended=true", "", "")
	if err != nil {
		return nil, err
	}
	var doc struct {
		Service struct {
			Roles []struct {
				Name  string `json:"name"`
				Nodes []struct {
					VMInfo struct {
						VM struct {
							ID       string `json:"ID"`
							Template struct {
								Context map[string]any `json:"CONTEXT"`
							} `json:"TEMPLATE"`
							UserTemplate map[string]any `json:"USER_TEMPLATE"`
						} `json:"VM"`
					} `json:"vm_info"`
				} `json:"nodes"`
			} `json:"roles"`
		} `json:"SERVICE"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("onegatesim: decoding the extended service: %w", err)
	}
	var out []SiblingView
	for _, r := range doc.Service.Roles {
		for _, n := range r.Nodes {
			id, err := strconv.Atoi(n.VMInfo.VM.ID)
			if err != nil {
				return nil, fmt.Errorf("onegatesim: extended service: VM ID %q", n.VMInfo.VM.ID)
			}
			out = append(out, SiblingView{ID: id, Role: r.Name,
				Context: scalars(n.VMInfo.VM.Template.Context), UserTemplate: scalars(n.VMInfo.VM.UserTemplate)})
		}
	}
	return out, nil
}

func scalars(m map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// errDropped is an injected FaultDrop: the connection closed unanswered.
var errDropped = errors.New("onegatesim: connection dropped without a response")

// do sends one request through the simulator's handler, in process.
func (h *Hostile) do(method, path, ctype, body string) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				panic(p)
			}
			out, err = nil, errDropped
		}
	}()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("X-ONEGATE-VMID", strconv.Itoa(h.vmid))
	r.Header.Set("X-ONEGATE-TOKEN", h.token)
	if ctype != "" {
		r.Header.Set("Content-Type", ctype)
	}
	w := httptest.NewRecorder()
	h.s.handler.ServeHTTP(w, r)
	res := w.Result()
	defer func() { _ = res.Body.Close() }()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		route, _, _ := strings.Cut(path, "?")
		return nil, &Refused{Route: method + " " + route, Status: res.StatusCode, Body: string(b)}
	}
	return b, nil
}
