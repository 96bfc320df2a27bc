package serve_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"filippo.io/age"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/onekube/onekube/agent/certgrant"
	"github.com/onekube/onekube/agent/etcdm"
	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/serve"
	"github.com/onekube/onekube/agent/system/systemtest"
	"github.com/onekube/onekube/agent/testbed/loopback"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// masterGate is OneGate for a service of masters, as seen by VM self.
type masterGate struct {
	gate.OneGate
	mu   sync.Mutex
	self int
	vms  map[int]*onegate.VM
}

func newMasterGate(self int, ids ...int) *masterGate {
	g := &masterGate{self: self, vms: map[int]*onegate.VM{}}
	for _, id := range ids {
		g.vms[id] = &onegate.VM{ID: id, State: onegate.StateActive, LCMState: onegate.LCMRunning, UserTemplate: map[string]string{},
			NICs: []onegate.NIC{{IP: fmt.Sprintf("10.0.0.%d", id)}}}
	}
	return g
}

func (g *masterGate) copyOf(id int) *onegate.VM {
	c := *g.vms[id]
	c.UserTemplate = map[string]string{}
	for k, v := range g.vms[id].UserTemplate {
		c.UserTemplate[k] = v
	}
	return &c
}

func (g *masterGate) GetVM(context.Context) (*onegate.VM, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.copyOf(g.self), nil
}

func (g *masterGate) GetVMByID(_ context.Context, id int) (*onegate.VM, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.copyOf(id), nil
}

func (g *masterGate) GetService(context.Context) (*onegate.Service, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := onegate.Role{Name: "master"}
	for id := range g.vms {
		r.Nodes = append(r.Nodes, onegate.Node{VMID: id})
	}
	return &onegate.Service{ID: 1, Roles: []onegate.Role{r}}, nil
}

func (g *masterGate) UpdateVM(_ context.Context, kvs ...onegate.KV) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, kv := range kvs {
		if err := onegate.CheckValue(kv.Key, kv.Value); err != nil {
			return err
		}
		g.vms[g.self].UserTemplate[kv.Key] = kv.Value
	}
	return nil
}

func (g *masterGate) EraseVMKey(_ context.Context, key string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.vms[g.self].UserTemplate, key)
	return nil
}

func (g *masterGate) set(id int, kv ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := 0; i < len(kv); i += 2 {
		g.vms[id].UserTemplate[kv[i]] = kv[i+1]
	}
}

func (g *masterGate) get(id int, k string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.vms[id].UserTemplate[k]
}

// recorder stands in for kubeadm's upload and for etcd: it records what
// the loop asked, and refuses a removal when told to.
type recorder struct {
	uploads   []string
	removed   []netip.Addr
	members   []etcdm.Member
	membersFn func() []etcdm.Member // when set, each listing
	quorumNo  bool
}

func (r *recorder) UploadCerts(_ context.Context, key vmcontext.Secret) error {
	r.uploads = append(r.uploads, key.Reveal())
	return nil
}

func (r *recorder) Members(context.Context) ([]etcdm.Member, error) {
	if r.membersFn != nil {
		return r.membersFn(), nil
	}
	return r.members, nil
}

func (r *recorder) RemoveMember(_ context.Context, ip netip.Addr) error {
	if r.quorumNo {
		return &etcdm.QuorumError{PeerIP: ip, Voters: 3, Healthy: 1}
	}
	r.removed = append(r.removed, ip)
	return nil
}

func joinRequest(t *testing.T, g *masterGate, id int) *age.X25519Identity {
	t.Helper()
	ident, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	g.set(id, vmcontext.KeyPubRecipient, ident.Recipient().String())
	return ident
}

// TestControlPlaneLoopGrantsInTurn drives the acting master's loop
// against a real API server (the bootstrap tokens it mints) through the
// joins of two masters and a late third one.
func TestControlPlaneLoopGrantsInTurn(t *testing.T) {
	srv := loopback.Start(t, loopback.Options{})
	cs := srv.Client(t)
	ctx := context.Background()
	g := newMasterGate(3, 3, 5, 7)
	g.set(3, vmcontext.KeyReady, "YES")
	rec := &recorder{members: []etcdm.Member{{PeerURLs: []string{"https://10.0.0.3:2380"}, Name: "m3", ClientURLs: []string{"x"}, Started: true, Healthy: true}}}
	clock := systemtest.NewClock(time.Now())
	initKey := strings.Repeat("ab", 32)
	n := newVMNet()
	loop := &serve.ControlPlane{OneGate: g, Client: cs, Uploader: rec, Members: rec, Clock: clock, Self: 3, MasterRole: "master",
		InitKey: func() (vmcontext.Secret, time.Time, bool) { return vmcontext.NewSecret(initKey), clock.Now(), true }, Dial: n.dial}
	present := func(vmid int, id *age.X25519Identity) {
		n.present(t, fmt.Sprintf("10.0.0.%d", vmid), certgrant.Presentation{VMID: vmid, Recipient: id.Recipient().String()})
	}

	tick := func() time.Duration {
		t.Helper()
		next, err := loop.Tick(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return next
	}
	if tick(); g.get(3, vmcontext.KeyPubCertKey) != "" {
		t.Fatal("granted with nobody asking")
	}
	if got := g.get(3, vmcontext.KeyPubEtcd); got != "voter@10.0.0.3" {
		t.Errorf("published members %q", got)
	}
	// VM 7 asks before its turn: VM 5 is neither READY nor failed.
	id7 := joinRequest(t, g, 7)
	present(7, id7)
	if tick(); g.get(3, vmcontext.KeyPubCertKey) != "" {
		t.Fatal("granted to VM 7 ahead of VM 5")
	}
	id5 := joinRequest(t, g, 5)
	present(5, id5)
	tick()
	raw := g.get(3, vmcontext.KeyPubCertKey)
	gr, err := certgrant.Parse(raw)
	if err != nil || gr.VMID != 5 {
		t.Fatalf("grant %q: %v", raw, err)
	}
	p, err := gr.Open(id5)
	if err != nil {
		t.Fatal(err)
	}
	if p.CertificateKey.Reveal() != initKey || len(rec.uploads) != 0 {
		t.Errorf("the fresh init key should be handed out as is; uploads %d", len(rec.uploads))
	}
	if len(rec.removed) != 0 {
		t.Errorf("etcd members removed at %v, but VM 5 had none", rec.removed)
	}
	tokID, _, _ := strings.Cut(p.Token.Reveal(), ".")
	if _, err := cs.CoreV1().Secrets("kube-system").Get(ctx, "bootstrap-token-"+tokID, metav1.GetOptions{}); err != nil {
		t.Fatalf("the granted token is not in the cluster: %v", err)
	}
	// Ticking again while VM 5 joins changes nothing: no second removal.
	tick()
	if len(rec.removed) != 0 || g.get(3, vmcontext.KeyPubCertKey) != raw {
		t.Error("a second tick acted on the same request again")
	}

	// VM 5 is READY: the grant and its token go; VM 7's turn.
	g.set(5, vmcontext.KeyReady, "YES")
	delete(g.vms[5].UserTemplate, vmcontext.KeyPubRecipient)
	clock.Advance(2 * time.Hour) // kubeadm-certs of the init upload are gone by now
	tick()
	if _, err := cs.CoreV1().Secrets("kube-system").Get(ctx, "bootstrap-token-"+tokID, metav1.GetOptions{}); err == nil {
		t.Error("VM 5's token outlived its join")
	}
	gr7, err := certgrant.Parse(g.get(3, vmcontext.KeyPubCertKey))
	if err != nil || gr7.VMID != 7 {
		t.Fatalf("grant for VM 7: %+v %v", gr7, err)
	}
	p7, err := gr7.Open(id7)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.uploads) != 1 || p7.CertificateKey.Reveal() != rec.uploads[0] || p7.CertificateKey.Reveal() == initKey {
		t.Errorf("after 2 h a fresh upload was due: uploads %d", len(rec.uploads))
	}
	g.set(7, vmcontext.KeyReady, "YES")
	if next := tick(); g.get(3, vmcontext.KeyPubCertKey) != "" || next < 10*time.Second {
		t.Errorf("grant left after every master joined, or busy ticking (%s)", next)
	}
}

// TestControlPlaneLoopRefusesToBreakQuorum: when the stale member cannot go
// without breaking quorum, nothing is granted and the refusal is published.
func TestControlPlaneLoopRefusesToBreakQuorum(t *testing.T) {
	t.Parallel()
	g := newMasterGate(3, 3, 5)
	rec := &recorder{quorumNo: true, members: []etcdm.Member{
		{ID: 3, PeerURLs: []string{"https://10.0.0.3:2380"}, Name: "m3", ClientURLs: []string{"x"}, Started: true, Healthy: true},
		{ID: 5, PeerURLs: []string{"https://10.0.0.5:2380"}, Name: "m5", ClientURLs: []string{"x"}, Started: true},
	}}
	n := newVMNet()
	clock := systemtest.NewClock(time.Now())
	loop := &serve.ControlPlane{OneGate: g, Uploader: rec, Members: rec, Clock: clock, Self: 3, MasterRole: "master", Dial: n.dial}
	id := joinRequest(t, g, 5)
	n.present(t, "10.0.0.5", certgrant.Presentation{VMID: 5, Recipient: id.Recipient().String()})
	var err error
	for range 10 {
		if _, err = loop.Tick(context.Background()); err != nil {
			break
		}
		clock.Advance(5 * time.Second)
	}
	if !errors.Is(err, etcdm.ErrQuorum) {
		t.Fatalf("err = %v", err)
	}
	if g.get(3, vmcontext.KeyPubCertKey) != "" || len(rec.uploads) != 0 {
		t.Error("granted or uploaded despite the refusal")
	}
	if e := g.get(3, vmcontext.KeyPubEtcdError); !strings.Contains(e, "VM 5 cannot join") || !strings.Contains(e, "quorum") {
		t.Errorf("published error %q", e)
	}
}

// TestControlPlaneLoopKeepsTheJoinersTokenWhenTheRequestChanges: the
// joiner took its grant and joins with its token; a sibling then rewrites
// the joiner's USER_TEMPLATE recipient (TestHostileMasters does it in the
// real bed, and under load the rewrite came after the grant). The grant
// leaves OneGate, but the token stays until the joiner is READY: deleting
// it failed the joiner's TLS bootstrap ("invalid bearer token").
func TestControlPlaneLoopKeepsTheJoinersTokenWhenTheRequestChanges(t *testing.T) {
	srv := loopback.Start(t, loopback.Options{})
	cs := srv.Client(t)
	ctx := context.Background()
	g := newMasterGate(3, 3, 5)
	g.set(3, vmcontext.KeyReady, "YES")
	rec := &recorder{members: []etcdm.Member{{PeerURLs: []string{"https://10.0.0.3:2380"}, Name: "m3", ClientURLs: []string{"x"}, Started: true, Healthy: true}}}
	clock := systemtest.NewClock(time.Now())
	n := newVMNet()
	loop := &serve.ControlPlane{OneGate: g, Client: cs, Uploader: rec, Members: rec, Clock: clock, Self: 3, MasterRole: "master",
		InitKey: func() (vmcontext.Secret, time.Time, bool) {
			return vmcontext.NewSecret(strings.Repeat("cd", 32)), clock.Now(), true
		}, Dial: n.dial}
	tick := func() {
		t.Helper()
		if _, err := loop.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	tokenLive := func(id string) bool {
		_, err := cs.CoreV1().Secrets("kube-system").Get(ctx, "bootstrap-token-"+id, metav1.GetOptions{})
		return err == nil
	}
	id5 := joinRequest(t, g, 5)
	n.present(t, "10.0.0.5", certgrant.Presentation{VMID: 5, Recipient: id5.Recipient().String()})
	tick()
	gr, err := certgrant.Parse(g.get(3, vmcontext.KeyPubCertKey))
	if err != nil || gr.VMID != 5 {
		t.Fatalf("grant: %+v %v", gr, err)
	}
	p, err := gr.Open(id5)
	if err != nil {
		t.Fatal(err)
	}
	tokID, _, _ := strings.Cut(p.Token.Reveal(), ".")

	// The sibling's rewrite, while VM 5 runs kubeadm join.
	evil, _ := age.GenerateX25519Identity()
	g.set(5, vmcontext.KeyPubRecipient, evil.Recipient().String())
	tick()
	if g.get(3, vmcontext.KeyPubCertKey) != "" {
		t.Error("the grant stayed in OneGate after the request changed")
	}
	if !tokenLive(tokID) {
		t.Fatal("the joiner's token was deleted while it may be joining with it")
	}
	tick()
	if !tokenLive(tokID) {
		t.Fatal("the joiner's token was deleted on the next tick")
	}
	// Or erases it: no request at all, the turn still VM 5's.
	delete(g.vms[5].UserTemplate, vmcontext.KeyPubRecipient)
	tick()
	if !tokenLive(tokID) {
		t.Fatal("the joiner's token was deleted once its recipient was erased")
	}
	// VM 5 is READY: now its token goes.
	g.set(5, vmcontext.KeyReady, "YES")
	tick()
	if tokenLive(tokID) {
		t.Error("VM 5's token outlived its join")
	}
}

// TestControlPlaneLoopIdleTick: with every master READY the loop ticks
// at its idle pace, 30 s unless Idle (serve's hidden --controlplane-idle,
// which the bed sets to watch ticks rather than sleep) says otherwise.
func TestControlPlaneLoopIdleTick(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		idle, want time.Duration
	}{
		{0, 30 * time.Second},
		{2 * time.Second, 2 * time.Second},
	} {
		g := newMasterGate(3, 3)
		g.set(3, vmcontext.KeyReady, "YES")
		rec := &recorder{members: []etcdm.Member{{PeerURLs: []string{"https://10.0.0.3:2380"}, Name: "m3", ClientURLs: []string{"x"}, Started: true, Healthy: true}}}
		loop := &serve.ControlPlane{OneGate: g, Client: fake.NewClientset(), Uploader: rec, Members: rec, Clock: systemtest.NewClock(time.Now()),
			Self: 3, MasterRole: "master", Dial: newVMNet().dial, Idle: tc.idle}
		next, err := loop.Tick(context.Background())
		if err != nil || next != tc.want {
			t.Errorf("Idle %s: next tick in %s (%v), want %s", tc.idle, next, err, tc.want)
		}
	}
}
