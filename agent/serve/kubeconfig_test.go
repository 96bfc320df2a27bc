package serve

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/onekube/onekube/agent/credential"
	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/system/systemtest"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/kubeconfig"
	"github.com/onekube/onekube/context/onegate"
)

// utOneGate is a master's USER_TEMPLATE and CONTEXT in memory, with
// OneGate's erase semantics.
type utOneGate struct {
	gate.OneGate
	mu      sync.Mutex
	ut      map[string]string
	context map[string]string
	gets    int
	puts    int
	erases  int
	extGets int
}

func (f *utOneGate) GetVM(context.Context) (*onegate.VM, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	return &onegate.VM{ID: 7, UserTemplate: maps.Clone(f.ut)}, nil
}

func (f *utOneGate) GetServiceExtended(context.Context) (*onegate.Service, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.extGets++
	return &onegate.Service{Roles: []onegate.Role{{Name: "master", Nodes: []onegate.Node{
		{VMID: 7, VM: &onegate.VM{ID: 7, Context: maps.Clone(f.context)}}}}}}, nil
}

func (f *utOneGate) UpdateVM(_ context.Context, kvs ...onegate.KV) error {
	if _, err := onegate.EncodeUpdate(kvs); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.puts++
	for _, kv := range kvs {
		f.ut[kv.Key] = kv.Value
	}
	return nil
}

func (f *utOneGate) EraseVMKey(_ context.Context, key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.erases++
	if _, ok := f.ut[key]; !ok {
		return &onegate.Error{Method: "PUT", Path: "/vm", Status: 500, Body: "[one.vm.update] attribute not found"}
	}
	delete(f.ut, key)
	return nil
}

func (f *utOneGate) get(key string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.ut[key]
	return v, ok
}

func (f *utOneGate) set(key, v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ut[key] = v
}

func newKey(t *testing.T) *age.X25519Identity {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func request(t *testing.T, name, role string, ttl time.Duration, recipient string) string {
	t.Helper()
	v, err := kubeconfig.Request{Name: name, Role: role, TTL: ttl, Recipient: recipient}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Requests that name someone the CONTEXT does not authorize, as a hostile
// sibling writes them, get a refusal and no certificate, without the CA
// or the API server ever being touched.
func TestKubeconfigRefusesWhatContextDoesNotAuthorize(t *testing.T) {
	t.Parallel()
	alice, mallory := newKey(t), newKey(t)
	og := &utOneGate{ut: map[string]string{}, context: map[string]string{
		vmcontext.KeyKubeconfigUsers: "alice:" + alice.Recipient().String() + ";bob:",
	}}
	clock := systemtest.NewClock(time.Unix(1767225600, 0))
	k := &Kubeconfig{OneGate: og, VMID: 7, Clock: clock, Log: slog.New(slog.DiscardHandler),
		CA: func() (*credential.CA, error) { t.Fatal("the CA was read for a refused request"); return nil, nil }}
	cases := map[string]struct{ value, reason string }{
		"AAAAAAAAA1": {request(t, "alice", kubeconfig.RoleClusterAdmin, time.Hour, mallory.Recipient().String()), "recipient age1"},
		"AAAAAAAAA2": {request(t, "mallory", kubeconfig.RoleClusterAdmin, time.Hour, mallory.Recipient().String()), "user mallory is not authorized"},
		"AAAAAAAAA3": {request(t, "bob", kubeconfig.RoleView, time.Hour, mallory.Recipient().String()), "user bob is not authorized"},
		"AAAAAAAAA4": {"2 alice cluster-admin 86400 - " + strings.Repeat("x", 40), "request"},
		"AAAAAAAAA5": {"1 alice cluster-admin 86400 " + alice.Recipient().String(), "upgrade onekube-flow"},
	}
	for id, c := range cases {
		og.set(kubeconfig.RequestKey(id), c.value)
	}
	for range 2 { // maxAnswersPerTick at a time
		if _, err := k.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for id, c := range cases {
		v, ok := og.get(kubeconfig.AnswerKey(id))
		if !ok {
			t.Fatalf("%s: no answer", id)
		}
		a, err := kubeconfig.ParseAnswer(v)
		if err != nil {
			t.Fatal(err)
		}
		if a.Sealed != "" || !strings.Contains(a.Reason, c.reason) || a.Legacy != strings.HasPrefix(c.value, "1 ") {
			t.Errorf("%s: answer %+v, want a refusal containing %q", id, a, c.reason)
		}
	}
	if k.refused != len(cases) || k.issued != 0 {
		t.Errorf("issued %d refused %d", k.issued, k.refused)
	}
}

// An exchange ends when the requester writes "done" (both keys erased),
// or after AnswerTTL; an idle master costs one GET per tick and no PUT.
func TestKubeconfigErasesFetchedAndStaleAnswers(t *testing.T) {
	t.Parallel()
	clock := systemtest.NewClock(time.Unix(1767225600, 0))
	og := &utOneGate{ut: map[string]string{"READY": "YES"}, context: map[string]string{}}
	k := &Kubeconfig{OneGate: og, VMID: 7, Clock: clock, Log: slog.New(slog.DiscardHandler)}
	ctx := context.Background()

	next, err := k.Tick(ctx)
	if err != nil || next != 5*time.Second || og.gets != 1 || og.puts+og.erases+og.extGets != 0 {
		t.Fatalf("idle tick: next %s err %v, %d GET %d PUT %d erase %d extended", next, err, og.gets, og.puts, og.erases, og.extGets)
	}

	ans, _ := kubeconfig.Answer{At: clock.Now(), Reason: "x"}.Encode()
	og.set(kubeconfig.RequestKey("FETCHED001"), kubeconfig.Done)
	og.set(kubeconfig.AnswerKey("FETCHED001"), ans)
	og.set(kubeconfig.RequestKey("WAITING001"), "1 whatever")
	og.set(kubeconfig.AnswerKey("WAITING001"), ans)
	og.set(kubeconfig.RequestKey("DONEONLY01"), kubeconfig.Done)
	next, err = k.Tick(ctx)
	if err != nil || next != 2*time.Second {
		t.Fatalf("tick: next %s err %v", next, err)
	}
	for _, key := range []string{kubeconfig.RequestKey("FETCHED001"), kubeconfig.AnswerKey("FETCHED001"), kubeconfig.RequestKey("DONEONLY01")} {
		if _, ok := og.get(key); ok {
			t.Errorf("%s not erased", key)
		}
	}
	if _, ok := og.get(kubeconfig.AnswerKey("WAITING001")); !ok {
		t.Fatal("an answer waiting to be fetched was erased")
	}
	clock.Advance(kubeconfig.AnswerTTL + time.Second)
	if next, err = k.Tick(ctx); err != nil || next != 5*time.Second {
		t.Fatalf("after the answer TTL: next %s err %v", next, err)
	}
	for _, key := range []string{kubeconfig.RequestKey("WAITING001"), kubeconfig.AnswerKey("WAITING001")} {
		if _, ok := og.get(key); ok {
			t.Errorf("%s outlived AnswerTTL", key)
		}
	}
	if got, _ := og.get("READY"); got != "YES" {
		t.Error("an unrelated key was touched")
	}
}

// However many requests a sibling writes, one tick answers a bounded
// number; the rest wait for the next ticks.
func TestKubeconfigBoundsWorkPerTick(t *testing.T) {
	t.Parallel()
	clock := systemtest.NewClock(time.Unix(1767225600, 0))
	og := &utOneGate{ut: map[string]string{}, context: map[string]string{}}
	k := &Kubeconfig{OneGate: og, VMID: 7, Clock: clock, Log: slog.New(slog.DiscardHandler)}
	for i := range 10 {
		og.set(kubeconfig.RequestKey("FLOOD0000"+string(rune('0'+i))), "junk")
	}
	if _, err := k.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if og.puts != maxAnswersPerTick || og.extGets > 1 {
		t.Errorf("%d PUTs and %d extended reads in one tick, want %d and at most 1", og.puts, og.extGets, maxAnswersPerTick)
	}
}

// A failure to read the authorized list is retried (no refusal is
// published) when it is transient.
func TestKubeconfigRetriesTransientFailures(t *testing.T) {
	t.Parallel()
	clock := systemtest.NewClock(time.Unix(1767225600, 0))
	og := &utOneGate{ut: map[string]string{}}
	k := &Kubeconfig{OneGate: og, VMID: 7, Clock: clock, Log: slog.New(slog.DiscardHandler),
		Users: func(context.Context) (string, error) { return "", gate.Retryable(errors.New("503")) }}
	a := newKey(t)
	og.set(kubeconfig.RequestKey("RETRY00001"), request(t, "alice", kubeconfig.RoleView, time.Hour, a.Recipient().String()))
	if _, err := k.Tick(context.Background()); err == nil {
		t.Fatal("tick succeeded")
	}
	if _, ok := og.get(kubeconfig.AnswerKey("RETRY00001")); ok {
		t.Fatal("an answer was published for a transient failure")
	}
}
