package serve_test

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"filippo.io/age"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/onekube/onekube/agent/certgrant"
	"github.com/onekube/onekube/agent/etcdm"
	"github.com/onekube/onekube/agent/serve"
	"github.com/onekube/onekube/agent/system/systemtest"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
	"github.com/onekube/onekube/context/protocol"
)

// vmNet is the service's network: who answers at which VM address. A VM
// can serve only at its own addresses; only spoofing, which these tests
// leave out (docs/trust.md, residual risks), would let it answer at
// another's.
type vmNet struct {
	mu sync.Mutex
	at map[string]string // "<ip>:<port>" -> a loopback listener
}

func newVMNet() *vmNet { return &vmNet{at: map[string]string{}} }

func (n *vmNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	n.mu.Lock()
	real, ok := n.at[addr]
	n.mu.Unlock()
	if !ok {
		return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
	}
	var d net.Dialer
	return d.DialContext(ctx, network, real)
}

// present serves p at ip, as the agent of the VM holding ip would.
func (n *vmNet) present(t *testing.T, ip string, p certgrant.Presentation) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = certgrant.Serve(ctx, ln, p) }()
	n.mu.Lock()
	n.at[net.JoinHostPort(ip, strconv.Itoa(certgrant.PresentPort))] = ln.Addr().String()
	n.mu.Unlock()
	t.Cleanup(func() { cancel(); <-done })
}

func newIdentity(t *testing.T) *age.X25519Identity {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// forgerIP is a sibling that is no master (a worker), with root on its VM.
const forgerIP = "10.0.0.9"

// TestControlPlaneLoopTrustsOnlyTheAddress: a sibling writes its own
// recipient where the acting master looks for a joining master's, and
// serves it at its own address. The grant, if any, is sealed only to the
// recipient served at the joiner's NIC address as oned reports it; the
// forger's key never opens one.
func TestControlPlaneLoopTrustsOnlyTheAddress(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		// setup arranges VM 5 and the network; it returns the identity
		// that should receive a grant, nil for none.
		setup func(t *testing.T, g *masterGate, n *vmNet, forger *age.X25519Identity) *age.X25519Identity
	}{
		{"the joiner's own request", func(t *testing.T, g *masterGate, n *vmNet, _ *age.X25519Identity) *age.X25519Identity {
			id := joinRequest(t, g, 5)
			n.present(t, "10.0.0.5", certgrant.Presentation{VMID: 5, Recipient: id.Recipient().String()})
			return id
		}},
		{"a sibling overwrites the joining master's recipient", func(t *testing.T, g *masterGate, n *vmNet, forger *age.X25519Identity) *age.X25519Identity {
			id := joinRequest(t, g, 5)
			n.present(t, "10.0.0.5", certgrant.Presentation{VMID: 5, Recipient: id.Recipient().String()})
			g.set(5, vmcontext.KeyPubRecipient, forger.Recipient().String())
			n.present(t, forgerIP, certgrant.Presentation{VMID: 5, Recipient: forger.Recipient().String()})
			return nil
		}},
		{"a sibling claims a join for a powered-off master", func(t *testing.T, g *masterGate, n *vmNet, forger *age.X25519Identity) *age.X25519Identity {
			g.mu.Lock()
			g.vms[5].State, g.vms[5].LCMState = onegate.StatePoweroff, 0
			g.mu.Unlock()
			g.set(5, vmcontext.KeyPubRecipient, forger.Recipient().String(), vmcontext.KeyReady, "NO", vmcontext.KeyPubPhase, protocol.PhaseWaitCertKey)
			n.present(t, forgerIP, certgrant.Presentation{VMID: 5, Recipient: forger.Recipient().String()})
			return nil
		}},
		{"a sibling claims a join for a running master that is not joining", func(t *testing.T, g *masterGate, n *vmNet, forger *age.X25519Identity) *age.X25519Identity {
			g.set(5, vmcontext.KeyPubRecipient, forger.Recipient().String(), vmcontext.KeyReady, "NO", vmcontext.KeyPubPhase, protocol.PhaseWaitCertKey)
			n.present(t, forgerIP, certgrant.Presentation{VMID: 5, Recipient: forger.Recipient().String()})
			return nil
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			g := newMasterGate(3, 3, 5)
			g.set(3, vmcontext.KeyReady, "YES")
			n := newVMNet()
			forger := newIdentity(t)
			want := c.setup(t, g, n, forger)
			rec := &recorder{}
			clock := systemtest.NewClock(time.Now())
			loop := &serve.ControlPlane{OneGate: g, Uploader: rec, Members: rec, Clock: clock, Self: 3, MasterRole: "master",
				Dial: n.dial, Client: &tokenSink{}}
			for range 5 {
				_, _ = loop.Tick(context.Background())
				clock.Advance(2 * time.Second)
			}
			raw := g.get(3, vmcontext.KeyPubCertKey)
			if raw == "" {
				if want != nil {
					t.Fatal("no grant for the joiner's own request")
				}
				return
			}
			gr, err := certgrant.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := gr.Open(forger); err == nil {
				t.Fatal("the forger's key opens the grant")
			}
			if want == nil {
				t.Fatalf("granted to VM %d's recipient %s without its request", gr.VMID, gr.Recipient)
			}
			if _, err := gr.Open(want); err != nil {
				t.Fatalf("the joiner cannot open its grant: %v", err)
			}
		})
	}
}

// TestControlPlaneLoopKeepsALiveMember: an etcd member goes only when its
// own health checks failed for a while and the VM at its address presents
// itself as the joining master; never after one slow probe, never for a
// recipient a sibling wrote.
func TestControlPlaneLoopKeepsALiveMember(t *testing.T) {
	t.Parallel()
	m3 := etcdm.Member{ID: 3, Name: "m3", PeerURLs: []string{"https://10.0.0.3:2380"}, ClientURLs: []string{"x"}, Started: true, Healthy: true}
	m7 := etcdm.Member{ID: 7, Name: "m7", PeerURLs: []string{"https://10.0.0.7:2380"}, ClientURLs: []string{"x"}, Started: true, Healthy: true}
	m5 := func(healthy bool) etcdm.Member {
		return etcdm.Member{ID: 5, Name: "m5", PeerURLs: []string{"https://10.0.0.5:2380"}, ClientURLs: []string{"x"}, Started: true, Healthy: healthy}
	}
	for _, c := range []struct {
		name string
		// healthy says how VM 5's member answers its health checks
		// during tick i.
		healthy func(i int) bool
		setup   func(t *testing.T, g *masterGate, n *vmNet, forger *age.X25519Identity)
		// removeAfter is the earliest tick (0-based) at which the member may
		// go; -1: never.
		removeAfter int
	}{
		{"one slow probe of a joiner's member", func(i int) bool { return i != 0 },
			func(t *testing.T, g *masterGate, n *vmNet, _ *age.X25519Identity) {
				id := joinRequest(t, g, 5)
				n.present(t, "10.0.0.5", certgrant.Presentation{VMID: 5, Recipient: id.Recipient().String()})
			}, -1},
		{"a forged key on a running master with a slow member", func(int) bool { return false },
			func(t *testing.T, g *masterGate, n *vmNet, forger *age.X25519Identity) {
				g.set(5, vmcontext.KeyPubRecipient, forger.Recipient().String(), vmcontext.KeyReady, "NO", vmcontext.KeyPubPhase, protocol.PhaseWaitCertKey)
				n.present(t, forgerIP, certgrant.Presentation{VMID: 5, Recipient: forger.Recipient().String()})
			}, -1},
		{"a forged key on a powered-off master", func(int) bool { return false },
			func(t *testing.T, g *masterGate, n *vmNet, forger *age.X25519Identity) {
				g.mu.Lock()
				g.vms[5].State, g.vms[5].LCMState = onegate.StatePoweroff, 0
				g.mu.Unlock()
				g.set(5, vmcontext.KeyPubRecipient, forger.Recipient().String(), vmcontext.KeyReady, "NO", vmcontext.KeyPubPhase, protocol.PhaseWaitCertKey)
				n.present(t, forgerIP, certgrant.Presentation{VMID: 5, Recipient: forger.Recipient().String()})
			}, -1},
		{"the dead member of a recreated master that presents itself", func(int) bool { return false },
			func(t *testing.T, g *masterGate, n *vmNet, _ *age.X25519Identity) {
				id := joinRequest(t, g, 5)
				n.present(t, "10.0.0.5", certgrant.Presentation{VMID: 5, Recipient: id.Recipient().String()})
			}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			g := newMasterGate(3, 3, 5, 7)
			g.set(3, vmcontext.KeyReady, "YES")
			g.set(7, vmcontext.KeyReady, "YES")
			n := newVMNet()
			c.setup(t, g, n, newIdentity(t))
			tick := 0
			rec := &recorder{}
			rec.membersFn = func() []etcdm.Member {
				ms := []etcdm.Member{m3, m7}
				if !rec.gone(netip.MustParseAddr("10.0.0.5")) {
					ms = append(ms, m5(c.healthy(tick)))
				}
				return ms
			}
			clock := systemtest.NewClock(time.Now())
			loop := &serve.ControlPlane{OneGate: g, Uploader: rec, Members: rec, Clock: clock, Self: 3, MasterRole: "master",
				Dial: n.dial, Client: &tokenSink{}}
			removedAt := -1
			for i := range 60 {
				tick = i
				_, _ = loop.Tick(context.Background())
				if removedAt < 0 && len(rec.removed) > 0 {
					removedAt = i
				}
				clock.Advance(5 * time.Second)
			}
			switch {
			case c.removeAfter < 0 && removedAt >= 0:
				t.Fatalf("removed the member at %v on tick %d", rec.removed, removedAt)
			case c.removeAfter >= 0 && removedAt < c.removeAfter:
				t.Fatalf("removed on tick %d, before its health checks failed for long (tick %d)", removedAt, c.removeAfter)
			case len(rec.removed) > 1:
				t.Fatalf("removed %d times", len(rec.removed))
			}
			if c.removeAfter >= 0 && g.get(3, vmcontext.KeyPubCertKey) == "" {
				t.Error("no grant after the stale member went")
			}
		})
	}
}

func (r *recorder) gone(ip netip.Addr) bool {
	for _, a := range r.removed {
		if a == ip {
			return true
		}
	}
	return false
}

// tokenSink is the API server as far as the control-plane loop uses it:
// it takes the bootstrap token Secrets the loop mints and deletes.
// Anything else panics on the nil interfaces.
type tokenSink struct {
	kubernetes.Interface
	mu      sync.Mutex
	secrets map[string]bool
}

func (s *tokenSink) CoreV1() corev1client.CoreV1Interface { return sinkCore{s: s} }

type sinkCore struct {
	corev1client.CoreV1Interface
	s *tokenSink
}

func (c sinkCore) Secrets(string) corev1client.SecretInterface { return sinkSecrets{s: c.s} }

type sinkSecrets struct {
	corev1client.SecretInterface
	s *tokenSink
}

func (x sinkSecrets) Create(_ context.Context, sec *corev1.Secret, _ metav1.CreateOptions) (*corev1.Secret, error) {
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	if x.s.secrets == nil {
		x.s.secrets = map[string]bool{}
	}
	x.s.secrets[sec.Name] = true
	return sec, nil
}

func (x sinkSecrets) Delete(_ context.Context, name string, _ metav1.DeleteOptions) error {
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	delete(x.s.secrets, name)
	return nil
}
