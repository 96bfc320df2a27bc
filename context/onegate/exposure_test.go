package onegate_test

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/onekube/onekube/context/onegate"
	"github.com/onekube/onekube/context/onegatesim"
)

// The probe against the simulator, which reproduces the real server's
// permission check, restricted-attribute check and bypass: the findings,
// the number of requests, and a template left as it was.
func TestProbeRestrictedBypassAgainstSimulator(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		version  string
		deny     []string
		want     string
		requests int
		fails    bool
	}{
		{"default conf 7.4", "7.4", nil, "restricted-bypass=yes update_by_id=yes", 1, false},
		{"default conf 6.10", "6.10", nil, "restricted-bypass=yes update_by_id=yes", 1, false},
		{"hardened 7.4", "7.4", onegatesim.HardenedDeny(), "restricted-bypass=yes update_by_id=no", 2, false},
		{"hardened 6.10", "6.10", onegatesim.HardenedDeny(), "restricted-bypass=yes update_by_id=no", 2, false},
		{"every update off", "7.4", []string{"vm:update", "vm:update_by_id"}, "restricted-bypass=unknown update_by_id=no", 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sim := onegatesim.New(onegatesim.Options{Dir: t.TempDir(), Version: c.version, Deny: c.deny})
			if _, err := sim.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = sim.Close() })
			if _, err := sim.Instantiate([]byte(simTemplate(c.version)), nil); err != nil {
				t.Fatal(err)
			}
			master := sim.RoleVMs(1, "master")[0]
			before := sim.UserTemplate(master.ID)
			e, err := clientFor(t, master).ProbeExposure(context.Background(), before["ROLE_NAME"])
			if (err != nil) != c.fails {
				t.Fatalf("ProbeExposure error = %v, want failure %v", err, c.fails)
			}
			if e.String() != c.want {
				t.Errorf("exposure %q, want %q", e, c.want)
			}
			if n := sim.Stats(master.ID).Total; n != c.requests {
				t.Errorf("%d requests, want %d", n, c.requests)
			}
			if after := sim.UserTemplate(master.ID); !maps.Equal(after, before) {
				t.Errorf("the probe changed the template:\n before %v\n after  %v", before, after)
			}
		})
	}
}

// probeServer answers PUT /vms/:id and PUT /vm with fixed replies.
type probeServer struct {
	mu     sync.Mutex
	byID   [2]any // status, body
	own    [2]any
	bodies []string
	paths  []string
}

func (p *probeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paths = append(p.paths, r.Method+" "+r.URL.Path)
	p.bodies = append(p.bodies, string(b))
	rep := p.own
	if r.URL.Path != "/vm" {
		rep = p.byID
	}
	w.WriteHeader(rep[0].(int))
	_, _ = io.WriteString(w, rep[1].(string))
}

// The verdicts the real server can give, each read as the finding it is.
func TestProbeExposureVerdicts(t *testing.T) {
	t.Parallel()
	const off = "Action (update_by_id) on resource (vm) not supported"
	const caught = "Attribute (ROLE_NAME) cannot be modified"
	for _, c := range []struct {
		name      string
		byID, own [2]any
		want      string
		paths     int
		fails     bool
	}{
		{"both open", [2]any{200, ""}, [2]any{500, "unused"}, "restricted-bypass=yes update_by_id=yes", 1, false},
		{"by-id on, bypass caught", [2]any{403, caught}, [2]any{500, "unused"}, "restricted-bypass=no update_by_id=yes", 1, false},
		{"by-id off, bypass open", [2]any{403, off}, [2]any{200, ""}, "restricted-bypass=yes update_by_id=no", 2, false},
		{"by-id off, bypass caught", [2]any{403, off}, [2]any{403, caught}, "restricted-bypass=no update_by_id=no", 2, false},
		{"by-id off, PUT /vm fails", [2]any{403, off}, [2]any{503, "down"}, "restricted-bypass=unknown update_by_id=no", 2, true},
		{"server error", [2]any{500, "Internal server error"}, [2]any{200, ""}, "restricted-bypass=unknown update_by_id=unknown", 1, true},
		{"other 403", [2]any{403, "Host not permitted"}, [2]any{200, ""}, "restricted-bypass=unknown update_by_id=unknown", 1, true},
		{"not in a service", [2]any{400, "Service 1 does not contain VM 49."}, [2]any{200, ""}, "restricted-bypass=unknown update_by_id=unknown", 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := &probeServer{byID: c.byID, own: c.own}
			srv := httptest.NewServer(p)
			t.Cleanup(srv.Close)
			e, err := newClient(t, srv.URL, nil).ProbeExposure(context.Background(), "master")
			if (err != nil) != c.fails {
				t.Fatalf("error = %v, want failure %v", err, c.fails)
			}
			if e.String() != c.want {
				t.Errorf("exposure %q, want %q", e, c.want)
			}
			if len(p.paths) != c.paths || p.paths[0] != "PUT /vms/49" || len(p.paths) == 2 && p.paths[1] != "PUT /vm" {
				t.Errorf("requests %v", p.paths)
			}
			for _, b := range p.bodies {
				v, err := url.ParseQuery(b)
				if err != nil || v.Get("data") != "\tROLE_NAME=\"master\"" || v.Get("type") != "1" {
					t.Errorf("probe body %q", b)
				}
			}
		})
	}
}

// A role name no update carries unchanged is never sent.
func TestProbeExposureRefusesOddRoleName(t *testing.T) {
	t.Parallel()
	p := &probeServer{byID: [2]any{200, ""}, own: [2]any{200, ""}}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	for _, role := range []string{"", `ma"ster`, "a,b", "x\ny"} {
		e, err := newClient(t, srv.URL, nil).ProbeExposure(context.Background(), role)
		if !errors.Is(err, onegate.ErrInvalid) || e != onegate.UnknownExposure {
			t.Errorf("role %q: %v, %v", role, e, err)
		}
	}
	if len(p.paths) != 0 {
		t.Errorf("sent %v", p.paths)
	}
}
