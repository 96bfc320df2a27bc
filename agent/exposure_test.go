package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/onekube/onekube/agent/kubeadm"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// probingOneGate is the fake OneGate with the production client's probe.
type probingOneGate struct {
	*fakeOneGate
	mu    sync.Mutex
	e     onegate.Exposure
	err   error
	roles []string // the ROLE_NAME each probe was given
}

func (p *probingOneGate) ProbeExposure(_ context.Context, role string) (onegate.Exposure, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.roles = append(p.roles, role)
	return p.e, p.err
}

func TestPublishProbesExposure(t *testing.T) {
	for _, c := range []struct {
		name  string
		self  int
		probe *probingOneGate // nil: a OneGate without the probe
		want  string          // "" : not published
		warn  bool
	}{
		{"master, default conf", 3, &probingOneGate{e: onegate.Exposure{RestrictedBypass: onegate.Yes, UpdateByID: onegate.Yes}},
			"restricted-bypass=yes update_by_id=yes", false},
		{"master, hardened", 3, &probingOneGate{e: onegate.Exposure{RestrictedBypass: onegate.Yes, UpdateByID: onegate.No}},
			"restricted-bypass=yes update_by_id=no", false},
		{"master, probe failed half-way", 3, &probingOneGate{e: onegate.Exposure{RestrictedBypass: onegate.Unknown, UpdateByID: onegate.No},
			err: Retryable(errors.New("onegate: PUT /vm: 503 Service Unavailable"))}, "restricted-bypass=unknown update_by_id=no", true},
		{"master, probe failed", 3, &probingOneGate{e: onegate.UnknownExposure, err: errors.New("onegate: PUT /vms/3: 500")},
			"restricted-bypass=unknown update_by_id=unknown", true},
		{"worker: never probes", 8, &probingOneGate{e: onegate.Exposure{RestrictedBypass: onegate.Yes, UpdateByID: onegate.Yes}}, "", false},
		{"OneGate without the probe", 3, nil, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			og := newService(c.self, []int{3}, []int{8})
			if c.self != 3 {
				og.publishMasterData(3, "abcdef.0123456789abcdef", strings.Repeat("ab", 32))
			}
			h := newHarness(t, og)
			if c.probe != nil {
				h.wrapOG = func(f *fakeOneGate) OneGate { c.probe.fakeOneGate = f; return c.probe }
			}
			if err := h.run(); err != nil {
				t.Fatalf("bootstrap: %v\n%s", err, h.logs)
			}
			ready := og.readyUpdates()
			if len(ready) != 1 {
				t.Fatalf("%d updates carried READY", len(ready))
			}
			got, published := kvMap(ready[0])[vmcontext.KeyPubExposure]
			if got != c.want || published != (c.want != "") {
				t.Errorf("published %s = %q (%v), want %q", vmcontext.KeyPubExposure, got, published, c.want)
			}
			if c.probe != nil && c.want != "" && strings.Join(c.probe.roles, ",") != "master" {
				t.Errorf("probed with ROLE_NAME %q, want one probe with master", c.probe.roles)
			}
			if c.probe != nil && c.want == "" && len(c.probe.roles) != 0 {
				t.Errorf("a worker probed: %q", c.probe.roles)
			}
			if w := strings.Contains(h.logs.String(), "probing what OneGate lets"); w != c.warn {
				t.Errorf("warning logged: %v, want %v\n%s", w, c.warn, h.logs)
			}
		})
	}
}

// A joining master probes too, and publishes with its READY.
func TestControlPlanePublishProbesExposure(t *testing.T) {
	og := newService(5, []int{3, 5}, nil)
	h := newHarness(t, og)
	h.cfg.Endpoint = vmcontext.LocalBalancer
	caHash, _ := kubeadm.CACertHash(h.kadm.caPEM)
	og.publishMasterData(3, "abcdef.0123456789abcdef", caHash)
	og.vms[3].UserTemplate[vmcontext.KeyPubEndpoint] = vmcontext.LocalBalancer
	actAsMaster(og, 3, 5)
	p := &probingOneGate{e: onegate.Exposure{RestrictedBypass: onegate.Yes, UpdateByID: onegate.No}}
	h.wrapOG = func(f *fakeOneGate) OneGate { p.fakeOneGate = f; return p }
	if err := h.run(); err != nil {
		t.Fatalf("%v\n%s", err, h.logs)
	}
	ready := og.readyUpdates()
	if len(ready) != 1 {
		t.Fatalf("%d updates carried READY", len(ready))
	}
	m := kvMap(ready[0])
	if m[vmcontext.KeyPubKind] != string(KindControlPlane) || m[vmcontext.KeyPubExposure] != "restricted-bypass=yes update_by_id=no" {
		t.Errorf("published %v", m)
	}
	if strings.Join(p.roles, ",") != "master" {
		t.Errorf("probes %q", p.roles)
	}
}
