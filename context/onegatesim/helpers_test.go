package onegatesim

import (
	"context"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixedClock keeps timestamps (STIME) stable for golden files.
func fixedClock() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

// harness is a simulator behind an httptest server.
type harness struct {
	t   *testing.T
	sim *Sim
	url string
	// hc is the server's own client: another test's httptest.Server.Close
	// closes http.DefaultTransport's idle connections, which broke
	// parallel tests' requests ("CloseIdleConnections called").
	hc *http.Client
}

func newHarness(t *testing.T, o Options) *harness {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	s := New(o)
	srv := httptest.NewServer(s.Handler())
	if o.Endpoint == "" {
		s.mu.Lock()
		s.endpoint = srv.URL
		s.mu.Unlock()
	}
	t.Cleanup(func() {
		srv.Close()
		if err := s.Close(); err != nil {
			t.Errorf("closing sim: %v", err)
		}
	})
	return &harness{t: t, sim: s, url: srv.URL, hc: srv.Client()}
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (h *harness) instantiate(tmpl, merge string) int {
	h.t.Helper()
	id, err := h.sim.Instantiate([]byte(tmpl), []byte(merge))
	if err != nil {
		h.t.Fatalf("instantiate: %v", err)
	}
	return id
}

// req describes one raw OneGate request.
type req struct {
	method, path string
	vm           int    // X-ONEGATE-VMID; -1: no headers at all
	token        string // "" : the VM's own token
	body         string
	ctype        string
}

type resp struct {
	status int
	body   string
	ctype  string
}

func (h *harness) do(r req) resp {
	h.t.Helper()
	hr, err := http.NewRequest(r.method, h.url+r.path, strings.NewReader(r.body))
	if err != nil {
		h.t.Fatal(err)
	}
	if r.vm >= 0 {
		tok := r.token
		if tok == "" {
			if v, ok := h.sim.VM(r.vm); ok {
				tok = v.Token.Reveal()
			}
		}
		hr.Header.Set("X-ONEGATE-VMID", strconv.Itoa(r.vm))
		hr.Header.Set("X-ONEGATE-TOKEN", tok)
	}
	if r.ctype != "" {
		hr.Header.Set("Content-Type", r.ctype)
	}
	res, err := h.hc.Do(hr)
	if err != nil {
		h.t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp{res.StatusCode, string(b), res.Header.Get("Content-Type")}
}

// putForm sends what the official client sends: data=...&type=N.
func (h *harness) putForm(vm int, path, data string, typ int) resp {
	h.t.Helper()
	body := "data=" + urlQueryEscape(data) + "&type=" + strconv.Itoa(typ)
	return h.do(req{method: "PUT", path: path, vm: vm, body: body, ctype: "application/x-www-form-urlencoded"})
}

func (h *harness) ready(vm int) {
	h.t.Helper()
	if r := h.putForm(vm, "/vm", "READY=YES", 1); r.status != 200 {
		h.t.Fatalf("READY=YES from VM %d: %d %s", vm, r.status, r.body)
	}
}

func ctxTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from golden file:\n got: %s\nwant: %s", name, got, want)
	}
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }
