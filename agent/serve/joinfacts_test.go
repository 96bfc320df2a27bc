package serve

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/onekube/onekube/agent/credential"
	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/agent/system/systemtest"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

const (
	realHash   = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
	forgedHash = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
)

// realFacts is a master's own join data as bootstrap published it.
func realFacts() []onegate.KV {
	return []onegate.KV{
		{Key: vmcontext.KeyPubMaster, Value: "10.0.0.10"},
		{Key: vmcontext.KeyPubPort, Value: "6443"},
		{Key: vmcontext.KeyPubHash, Value: realHash},
		{Key: vmcontext.KeyPubEndpoint, Value: "10.0.0.10:6443"},
	}
}

func factsTemplate(over map[string]string) map[string]string {
	ut := map[string]string{vmcontext.KeyReady: "YES"}
	for _, f := range realFacts() {
		ut[f.Key] = f.Value
	}
	for k, v := range over {
		if v == "-" {
			delete(ut, k)
			continue
		}
		ut[k] = v
	}
	return ut
}

func keysOf(kvs []onegate.KV) string {
	var ks []string
	for _, kv := range kvs {
		ks = append(ks, kv.Key)
	}
	return strings.Join(ks, ",")
}

// What a sibling's rewrite looks like, by meaning: another spelling of
// the same fact costs no write; another value, an erased key or garbage
// is put back; keys that are not join facts are never touched.
func TestDrifted(t *testing.T) {
	for _, tc := range []struct {
		name string
		over map[string]string
		want string
	}{
		{"as published", nil, ""},
		{"sha256: prefix, spaces", map[string]string{vmcontext.KeyPubHash: " sha256:" + strings.ToUpper(realHash) + " "}, ""},
		{"port spelt with a space", map[string]string{vmcontext.KeyPubPort: " 6443"}, ""},
		{"IPv4-mapped address", map[string]string{vmcontext.KeyPubMaster: "::ffff:10.0.0.10"}, ""},
		{"redirected", map[string]string{vmcontext.KeyPubMaster: "10.0.0.66", vmcontext.KeyPubHash: forgedHash},
			vmcontext.KeyPubMaster + "," + vmcontext.KeyPubHash},
		{"port", map[string]string{vmcontext.KeyPubPort: "7443"}, vmcontext.KeyPubPort},
		{"garbage hash", map[string]string{vmcontext.KeyPubHash: "sha256:zz"}, vmcontext.KeyPubHash},
		{"erased", map[string]string{vmcontext.KeyPubEndpoint: "-", vmcontext.KeyPubMaster: "-"}, vmcontext.KeyPubMaster + "," + vmcontext.KeyPubEndpoint},
		{"READY and token are not facts", map[string]string{vmcontext.KeyReady: "NO", vmcontext.KeyPubToken: "abcdef.0123456789abcdef"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := drifted(factsTemplate(tc.over), realFacts())
			if keysOf(got) != tc.want {
				t.Errorf("drifted %q, want %q", keysOf(got), tc.want)
			}
		})
	}
	// A token key handed in as a fact is never written by this path.
	if got := drifted(map[string]string{}, []onegate.KV{{Key: vmcontext.KeyPubToken, Value: "x"}}); len(got) != 0 {
		t.Errorf("a token key passed as a fact: %v", keysOf(got))
	}
}

// OwnJoinFacts: the address, port and endpoint bootstrap recorded, the
// hash of the ca.crt on disk now; a key never published is left out; no
// CA is an error.
func TestOwnJoinFacts(t *testing.T) {
	dir := t.TempDir()
	root := system.Root(dir)
	facts := OwnJoinFacts(root, map[string]string{vmcontext.KeyPubMaster: "10.0.0.10", vmcontext.KeyPubPort: "6443",
		vmcontext.KeyPubHash: forgedHash, vmcontext.KeyPubToken: "******", vmcontext.KeyReady: "YES"})
	if _, err := facts(); err == nil {
		t.Fatal("no ca.crt, no error")
	}
	ca := testCA(t)
	p := filepath.Join(dir, credential.CACertPath)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, ca.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := kubeadm.CACertHash(ca.CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	got, err := facts()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, kv := range got {
		m[kv.Key] = kv.Value
	}
	if len(m) != 3 || m[vmcontext.KeyPubMaster] != "10.0.0.10" || m[vmcontext.KeyPubPort] != "6443" || m[vmcontext.KeyPubHash] != want {
		t.Errorf("facts %v, want the recorded address and port and the disk's hash %s", m, want)
	}
}

// A sibling rewrites this master's join data (issue 20: the default
// onegate-server.conf lets it). The publish loop puts it back: at start
// (the read it makes anyway), in the same PUT as a new token, within
// Check while a token is shown, within IdleCheck otherwise; it warns
// without a token in the log, and writes nothing when nothing drifted.
// On main the rewrite stayed for ever.
func TestPublishRestoresJoinFacts(t *testing.T) {
	forged := map[string]string{vmcontext.KeyPubMaster: "10.0.0.66", vmcontext.KeyPubHash: forgedHash}
	type step struct {
		advance time.Duration
		mint    bool
		rewrite map[string]string
		// after the tick: requests so far, and whether the facts are real
		reads, puts int
		real        bool
	}
	for _, tc := range []struct {
		name  string
		start map[string]string
		steps []step
	}{
		{"rewritten before serve started: the start read repairs", forged, []step{
			{reads: 1, puts: 1, real: true},
			{advance: time.Minute, reads: 1, puts: 1, real: true},
		}},
		{"nothing rewritten: no write, idle reads at IdleCheck only", nil, []step{
			{reads: 1, real: true},
			{advance: 29 * time.Minute, reads: 1, real: true},
			{advance: time.Minute, reads: 2, real: true},
		}},
		{"rewritten while idle: restored at the token's PUT", nil, []step{
			{reads: 1, real: true},
			{advance: time.Minute, rewrite: forged, reads: 1, real: false},
			{mint: true, reads: 2, puts: 1, real: true},
		}},
		{"rewritten while a token is shown: restored within Check", nil, []step{
			{mint: true, reads: 1, puts: 1, real: true},
			{advance: 3 * time.Second, rewrite: forged, reads: 1, puts: 1, real: false},
			{advance: 7 * time.Second, reads: 2, puts: 2, real: true},
			{advance: 3 * time.Second, reads: 2, puts: 2, real: true},
		}},
		{"rewritten while idle: restored within IdleCheck", nil, []step{
			{reads: 1, real: true},
			{advance: time.Minute, rewrite: map[string]string{vmcontext.KeyPubPort: "7443"}, reads: 1, real: false},
			{advance: 30 * time.Minute, reads: 2, puts: 1, real: true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cs := fake.NewClientset()
			clock := systemtest.NewClock(time.Unix(1767225600, 0))
			og := newFakeService(20)
			og.add("master", 20, factsTemplate(tc.start))
			var logs bytes.Buffer
			p := &Publish{OneGate: og, Client: cs, Clock: clock, Log: slog.New(slog.NewTextHandler(&logs, nil)),
				Facts: func() ([]onegate.KV, error) { return realFacts(), nil }}
			var minted kubeadm.OwnedToken
			for i, s := range tc.steps {
				clock.Advance(s.advance)
				if s.rewrite != nil {
					og.set(func(f *fakeService) {
						for k, v := range s.rewrite {
							f.vms[20].UserTemplate[k] = v
						}
					})
				}
				if s.mint {
					var err error
					if minted, err = mintToken(ctx, cs, clock.Now().Add(time.Hour)); err != nil {
						t.Fatal(err)
					}
				}
				mustTick(t, p)
				if r, w := og.count("GetVM"), og.count("UpdateVM"); r != s.reads || w != s.puts {
					t.Errorf("step %d: %d GET /vm and %d PUTs, want %d and %d (%v)", i, r, w, s.reads, s.puts, og.calls)
				}
				ut := map[string]string{}
				og.set(func(f *fakeService) {
					for k, v := range f.vms[20].UserTemplate {
						ut[k] = v
					}
				})
				if d := drifted(ut, realFacts()); (len(d) == 0) != s.real {
					t.Errorf("step %d: facts real=%t, want %t (drifted: %s)", i, len(d) == 0, s.real, keysOf(d))
				}
				if s.mint && ut[vmcontext.KeyPubToken] != minted.Token.Reveal() {
					t.Errorf("step %d: the token is not shown", i)
				}
			}
			restored := p.Report().(PublishReport).JoinDataRestored
			warned := strings.Contains(logs.String(), "level=WARN") && strings.Contains(logs.String(), "rewritten")
			if (restored > 0) != warned {
				t.Errorf("restored %d facts, warned %t:\n%s", restored, warned, logs.String())
			}
			if warned && !strings.Contains(logs.String(), "10.0.0.66") && tc.start != nil {
				t.Errorf("the warning does not show the forged address:\n%s", logs.String())
			}
			if !minted.Token.IsZero() && strings.Contains(logs.String(), minted.Token.Reveal()) {
				t.Error("the token reached the log")
			}
		})
	}
}

// Facts that cannot be computed (ca.crt unreadable) only warn: the
// token is still shown, and a failed PUT makes the next tick read again.
func TestPublishFactsFailures(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	clock := systemtest.NewClock(time.Unix(1767225600, 0))
	og := newFakeService(20)
	og.add("master", 20, factsTemplate(nil))
	var logs bytes.Buffer
	p := &Publish{OneGate: og, Client: cs, Clock: clock, Log: slog.New(slog.NewTextHandler(&logs, nil)),
		Facts: func() ([]onegate.KV, error) { return nil, errors.New("no ca.crt") }}
	if _, err := mintToken(ctx, cs, clock.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	mustTick(t, p)
	if og.ut(20, vmcontext.KeyPubToken) == "" || !strings.Contains(logs.String(), "no ca.crt") {
		t.Errorf("token shown %t; log:\n%s", og.ut(20, vmcontext.KeyPubToken) != "", logs.String())
	}

	failing := &failingUpdate{fakeService: og}
	p = &Publish{OneGate: failing, Client: cs, Clock: clock, Facts: func() ([]onegate.KV, error) { return realFacts(), nil }}
	mustTick(t, p) // the start read: nothing drifted
	og.set(func(f *fakeService) { f.vms[20].UserTemplate[vmcontext.KeyPubHash] = forgedHash })
	clock.Advance(DefaultFactsCheck)
	failing.fail = true
	if _, err := p.Tick(ctx); err == nil {
		t.Fatal("a failed repair PUT did not fail the tick")
	}
	failing.fail = false
	reads := og.count("GetVM")
	mustTick(t, p)
	if og.count("GetVM") != reads+1 || og.ut(20, vmcontext.KeyPubHash) != realHash {
		t.Errorf("after a failed PUT: %d reads (want %d), hash %q", og.count("GetVM"), reads+1, og.ut(20, vmcontext.KeyPubHash))
	}
}

type failingUpdate struct {
	*fakeService
	fail bool
}

func (f *failingUpdate) UpdateVM(ctx context.Context, kvs ...onegate.KV) error {
	if f.fail {
		return errors.New("OneGate said 500")
	}
	return f.fakeService.UpdateVM(ctx, kvs...)
}
