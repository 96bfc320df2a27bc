package fleet

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// request is one OneGate request as a VM's agent made it.
type request struct {
	vm    int
	at    time.Time // virtual: requests take no virtual time
	route string    // "GET /vms/:id"
	bytes int       // response body
	err   bool
}

// meter is a VM's http.RoundTripper: it records every request (route,
// virtual time, response bytes) and hands the bodies of PUTs to the fleet,
// which reads phases and READY from them.
type meter struct {
	f    *fleet
	vm   *vmRun
	base http.RoundTripper
}

func (m meter) RoundTrip(req *http.Request) (*http.Response, error) {
	at := m.f.clock.Now()
	if req.Method == http.MethodPut && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		// Before the request goes out: a READY=YES may make the
		// simulator create VMs, which the fleet must hold time for.
		m.f.put(m.vm, at, parseUpdate(body))
	}
	resp, err := m.base.RoundTrip(req)
	r := request{vm: m.vm.info.ID, at: at, route: routeOf(req.Method, req.URL.Path), err: err != nil}
	if err == nil {
		b, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(b))
		r.bytes = len(b)
		err = rerr
	}
	m.f.record(r)
	return resp, err
}

// routeOf names a request by method and path pattern: numeric segments
// become ":id" (GET /vms/:id).
func routeOf(method, path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if s != "" && strings.Trim(s, "0123456789") == "" {
			segs[i] = ":id"
		}
	}
	return method + " " + strings.Join(segs, "/")
}

// update is what a PUT /vm body says: keys set (with their values) or,
// for an erase, the key removed.
type update struct {
	keys  map[string]string
	erase bool
}

// parseUpdate reads a PUT /vm body: form field data, one KEY="value" or
// KEY=value line per key, and type (2: erase the key named in data).
func parseUpdate(body []byte) update {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return update{}
	}
	u := update{keys: map[string]string{}, erase: form.Get("type") == "2"}
	for line := range strings.Lines(form.Get("data")) {
		k, v, _ := strings.Cut(strings.TrimRight(line, "\n"), "=")
		u.keys[k] = strings.Trim(v, `"`)
	}
	return u
}
