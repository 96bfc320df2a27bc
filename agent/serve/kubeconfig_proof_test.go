package serve

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"filippo.io/age"

	"github.com/onekube/onekube/agent/credential"
	"github.com/onekube/onekube/agent/system/systemtest"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/kubeconfig"
)

// testCA is a throwaway cluster CA for the loop to sign with.
func testCA(t *testing.T) *credential.CA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"},
		NotBefore: time.Unix(1767225600, 0).Add(-time.Hour), NotAfter: time.Unix(1767225600, 0).Add(365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalPKCS8PrivateKey(key)
	ca, err := credential.ParseCA(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}))
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// A sibling that knows alice's public key (every VM reads CONTEXT) writes
// a request for her after the owner deleted her binding: the master must
// neither recreate the binding nor sign anything for a request nobody
// proved, however many ticks pass.
func TestKubeconfigForgedRequestRestoresNothing(t *testing.T) {
	t.Parallel()
	alice := newKey(t)
	og := &utOneGate{ut: map[string]string{}, context: map[string]string{
		vmcontext.KeyKubeconfigUsers: "alice:" + alice.Recipient().String() + ":cluster-admin",
	}}
	clock := systemtest.NewClock(time.Unix(1767225600, 0))
	cs := fake.NewClientset()
	ca := testCA(t)
	k := &Kubeconfig{OneGate: og, VMID: 7, Clock: clock, Log: slog.New(slog.DiscardHandler), Client: cs,
		CA: func() (*credential.CA, error) { return ca, nil }}
	og.set(kubeconfig.RequestKey("FORGED0001"), request(t, "alice", kubeconfig.RoleClusterAdmin, kubeconfig.MaxTTL, alice.Recipient().String()))
	for range 5 {
		if _, err := k.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
		clock.Advance(2 * time.Second)
	}
	crbs, err := cs.RbacV1().ClusterRoleBindings().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(crbs.Items) != 0 || k.issued != 0 {
		t.Fatalf("a forged request restored %d bindings and issued %d certificates", len(crbs.Items), k.issued)
	}
}

// proofEnv is a master's loop with a CA and a fake API server, and alice
// (cluster-admin) and bob (no role given: view) on its list.
type proofEnv struct {
	og         *utOneGate
	k          *Kubeconfig
	cs         *fake.Clientset
	clock      *systemtest.Clock
	alice, bob *age.X25519Identity
}

func newProofEnv(t *testing.T) *proofEnv {
	t.Helper()
	e := &proofEnv{alice: newKey(t), bob: newKey(t), cs: fake.NewClientset(), clock: systemtest.NewClock(time.Unix(1767225600, 0))}
	e.og = &utOneGate{ut: map[string]string{}, context: map[string]string{
		vmcontext.KeyKubeconfigUsers: "alice:" + e.alice.Recipient().String() + ":cluster-admin;bob:" + e.bob.Recipient().String(),
	}}
	ca := testCA(t)
	e.k = &Kubeconfig{OneGate: e.og, VMID: 7, Clock: e.clock, Log: slog.New(slog.DiscardHandler), Client: e.cs,
		CA: func() (*credential.CA, error) { return ca, nil }}
	return e
}

func (e *proofEnv) tick(t *testing.T) {
	t.Helper()
	if _, err := e.k.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Second)
}

func (e *proofEnv) answer(t *testing.T, id string) kubeconfig.Answer {
	t.Helper()
	v, ok := e.og.get(kubeconfig.AnswerKey(id))
	if !ok {
		t.Fatalf("%s: no answer", id)
	}
	a, err := kubeconfig.ParseAnswer(v)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (e *proofEnv) bindings(t *testing.T) int {
	t.Helper()
	l, err := e.cs.RbacV1().ClusterRoleBindings().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(l.Items)
}

// prove does what the CLI does with a challenge: open it with the key,
// and write the proof for the request it asked.
func (e *proofEnv) prove(t *testing.T, id string, req kubeconfig.Request, key age.Identity) {
	t.Helper()
	a := e.answer(t, id)
	if !a.Challenge {
		t.Fatalf("%s: %+v, want a challenge", id, a)
	}
	plain, err := kubeconfig.Open(a.Sealed, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubeconfig.ParseChallenge(plain)
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != id || c.Request != req {
		t.Fatalf("challenge for %s %+v, want %s %+v", c.ID, c.Request, id, req)
	}
	req.Proof, err = c.Proof(id, req)
	if err != nil {
		t.Fatal(err)
	}
	v, err := req.Encode()
	if err != nil {
		t.Fatal(err)
	}
	e.og.set(kubeconfig.RequestKey(id), v)
}

func encode(t *testing.T, r kubeconfig.Request) string {
	t.Helper()
	v, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The master binds and signs only once the request carries the proof
// that its author opened the challenge sealed to the entry's key; the
// payload is for exactly what was asked. A restarted master (no memory of
// its challenge) challenges again rather than sign.
func TestKubeconfigIssuesOnlyAfterProof(t *testing.T) {
	t.Parallel()
	e := newProofEnv(t)
	req := kubeconfig.Request{Name: "alice", Role: kubeconfig.RoleClusterAdmin, TTL: time.Hour, Recipient: e.alice.Recipient().String()}
	e.og.set(kubeconfig.RequestKey("PROVED0001"), encode(t, req))
	e.tick(t)
	e.tick(t) // nothing more happens without a proof
	if e.k.issued != 0 || e.bindings(t) != 0 {
		t.Fatalf("issued %d, %d bindings before any proof", e.k.issued, e.bindings(t))
	}
	first := e.answer(t, "PROVED0001")

	// A restart loses the challenge: the proof of the old one is not taken.
	e.k = &Kubeconfig{OneGate: e.og, VMID: 7, Clock: e.clock, Log: slog.New(slog.DiscardHandler), Client: e.cs, CA: e.k.CA}
	e.prove(t, "PROVED0001", req, e.alice)
	e.tick(t)
	if again := e.answer(t, "PROVED0001"); !again.Challenge || again.Sealed == first.Sealed || e.k.issued != 0 {
		t.Fatalf("after a restart: %+v, issued %d; want a new challenge", again, e.k.issued)
	}
	e.tick(t) // the stale proof still in the request is no answer to it
	if a := e.answer(t, "PROVED0001"); !a.Challenge {
		t.Fatalf("the stale proof was judged: %+v", a)
	}
	e.prove(t, "PROVED0001", req, e.alice)
	e.tick(t)
	a := e.answer(t, "PROVED0001")
	if !a.Granted() || e.k.issued != 1 || e.bindings(t) != 1 {
		t.Fatalf("after the proof: %+v, issued %d, %d bindings", a, e.k.issued, e.bindings(t))
	}
	plain, err := kubeconfig.Open(a.Sealed, e.alice)
	if err != nil {
		t.Fatal(err)
	}
	p, err := kubeconfig.ParsePayload(plain)
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != "PROVED0001" || p.User != "alice" || p.Role != kubeconfig.RoleClusterAdmin {
		t.Errorf("payload for %s %s %s", p.ID, p.User, p.Role)
	}
	if _, err := e.cs.RbacV1().ClusterRoleBindings().Get(context.Background(), kubeconfig.Group("alice", kubeconfig.RoleClusterAdmin), metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
}

// What a sibling does to a pending request once it is challenged: a
// rewritten validity or role, a guessed proof, a real proof moved to
// another request. Each is refused, and nothing is bound or signed.
func TestKubeconfigRefusesRewrittenOrGuessedProofs(t *testing.T) {
	t.Parallel()
	e := newProofEnv(t)
	asked := kubeconfig.Request{Name: "bob", Role: kubeconfig.RoleView, TTL: time.Hour, Recipient: e.bob.Recipient().String()}
	for id, rewrite := range map[string]func(r kubeconfig.Request) kubeconfig.Request{
		"LONGER0001": func(r kubeconfig.Request) kubeconfig.Request { r.TTL = kubeconfig.MaxTTL; return r },
		"SHORTR0001": func(r kubeconfig.Request) kubeconfig.Request { r.TTL = kubeconfig.MinTTL; return r },
		"GUESSD0001": func(r kubeconfig.Request) kubeconfig.Request { r.Proof = strings.Repeat("A", 43); return r },
	} {
		e.og.set(kubeconfig.RequestKey(id), encode(t, asked))
		e.tick(t)
		e.prove(t, id, asked, e.bob)
		v, _ := e.og.get(kubeconfig.RequestKey(id))
		proved, err := kubeconfig.ParseRequest(v)
		if err != nil {
			t.Fatal(err)
		}
		e.og.set(kubeconfig.RequestKey(id), encode(t, rewrite(proved)))
		e.tick(t)
		if a := e.answer(t, id); a.Sealed != "" || !strings.Contains(a.Reason, "proof does not answer") {
			t.Errorf("%s: %+v, want a refusal", id, a)
		}
	}
	// A real proof copied onto another pending request of the same user.
	e.og.set(kubeconfig.RequestKey("ORIGIN0001"), encode(t, asked))
	e.og.set(kubeconfig.RequestKey("COPIED0001"), encode(t, asked))
	e.tick(t)
	e.prove(t, "ORIGIN0001", asked, e.bob)
	v, _ := e.og.get(kubeconfig.RequestKey("ORIGIN0001"))
	e.og.set(kubeconfig.RequestKey("COPIED0001"), v)
	e.og.set(kubeconfig.RequestKey("ORIGIN0001"), kubeconfig.Done)
	e.tick(t)
	if a := e.answer(t, "COPIED0001"); a.Sealed != "" {
		t.Errorf("a copied proof: %+v", a)
	}
	if e.k.issued != 0 || e.bindings(t) != 0 {
		t.Fatalf("issued %d, %d bindings", e.k.issued, e.bindings(t))
	}
}

// An entry may ask up to its maximum role: alice's is cluster-admin,
// bob's entry names none, so view. Bob asking for cluster-admin is refused
// at once, with what the owner would change, and no challenge is sent.
func TestKubeconfigMaxRole(t *testing.T) {
	t.Parallel()
	e := newProofEnv(t)
	cases := []struct {
		id    string
		req   kubeconfig.Request
		key   *age.X25519Identity
		grant bool
	}{
		{"ALICEADM01", kubeconfig.Request{Name: "alice", Role: kubeconfig.RoleClusterAdmin, TTL: time.Hour, Recipient: e.alice.Recipient().String()}, e.alice, true},
		{"ALICEVIEW1", kubeconfig.Request{Name: "alice", Role: kubeconfig.RoleView, TTL: time.Hour, Recipient: e.alice.Recipient().String()}, e.alice, true},
		{"BOBVIEW001", kubeconfig.Request{Name: "bob", Role: kubeconfig.RoleView, TTL: time.Hour, Recipient: e.bob.Recipient().String()}, e.bob, true},
		{"BOBADMIN01", kubeconfig.Request{Name: "bob", Role: kubeconfig.RoleClusterAdmin, TTL: time.Hour, Recipient: e.bob.Recipient().String()}, e.bob, false},
	}
	for _, c := range cases {
		e.og.set(kubeconfig.RequestKey(c.id), encode(t, c.req))
	}
	e.tick(t)
	for _, c := range cases {
		a := e.answer(t, c.id)
		if !c.grant {
			if a.Sealed != "" || !strings.Contains(a.Reason, "at most the view role") || !strings.Contains(a.Reason, "name:key:cluster-admin") {
				t.Errorf("%s: %+v, want a refusal naming the maximum", c.id, a)
			}
			continue
		}
		e.prove(t, c.id, c.req, c.key)
	}
	e.tick(t)
	for _, c := range cases {
		if a := e.answer(t, c.id); a.Granted() != c.grant {
			t.Errorf("%s: %+v, granted %v", c.id, a, c.grant)
		}
	}
	if _, err := e.cs.RbacV1().ClusterRoleBindings().Get(context.Background(), kubeconfig.Group("bob", kubeconfig.RoleClusterAdmin), metav1.GetOptions{}); err == nil {
		t.Error("bob got a cluster-admin binding")
	}
}
