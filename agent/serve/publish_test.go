package serve

import (
	"context"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/system/systemtest"
	"github.com/onekube/onekube/agent/testbed/loopback"
	vmcontext "github.com/onekube/onekube/context"
)

// Every master mirrors the current token and its expiry, writes OneGate
// only on a change, and erases both once the token is gone; a restart
// that finds the right value published writes nothing.
func TestPublishMirrorsTheToken(t *testing.T) {
	s := loopback.Start(t, loopback.Options{})
	cs := s.Client(t)
	ctx := context.Background()
	clock := systemtest.NewClock(time.Now().Truncate(time.Second))
	og := newFakeService(20)
	og.add("master", 20, map[string]string{vmcontext.KeyReady: "YES"})
	p := &Publish{OneGate: og, Client: cs, Clock: clock}

	mustTick(t, p) // nothing to show, nothing shown
	if og.count("UpdateVM")+og.count("EraseVMKey") != 0 {
		t.Fatalf("wrote to OneGate with nothing to change: %v", og.calls)
	}
	a, err := mintToken(ctx, cs, clock.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	mustTick(t, p)
	mustTick(t, p)
	if og.ut(20, vmcontext.KeyPubToken) != a.Token.Reveal() || og.ut(20, vmcontext.KeyPubTokenExpires) != a.Expires.UTC().Format(time.RFC3339) {
		t.Fatalf("published token=%t expiry %q", og.ut(20, vmcontext.KeyPubToken) != "", og.ut(20, vmcontext.KeyPubTokenExpires))
	}
	if og.count("UpdateVM") != 1 {
		t.Errorf("%d PUTs for one token", og.count("UpdateVM"))
	}

	// A fresher token replaces it (one PUT, both keys).
	b, err := mintToken(ctx, cs, clock.Now().Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	mustTick(t, p)
	if og.ut(20, vmcontext.KeyPubToken) != b.Token.Reveal() || og.count("UpdateVM") != 2 {
		t.Fatalf("did not switch to the fresher token (%d PUTs)", og.count("UpdateVM"))
	}

	// A restarted serve that finds b shown writes nothing.
	p = &Publish{OneGate: og, Client: cs, Clock: clock}
	mustTick(t, p)
	if og.count("UpdateVM") != 2 || og.count("GetVM") != 2 {
		t.Errorf("restart: %v", og.calls)
	}

	// Both gone: erased, token first.
	for _, x := range []string{a.ID, b.ID} {
		if err := deleteToken(ctx, cs, x); err != nil {
			t.Fatal(err)
		}
	}
	mustTick(t, p)
	if og.ut(20, vmcontext.KeyPubToken) != "" || og.ut(20, vmcontext.KeyPubTokenExpires) != "" {
		t.Error("a deleted token is still shown")
	}
	mustTick(t, p)
	if og.count("EraseVMKey") != 2 {
		t.Errorf("%d erases", og.count("EraseVMKey"))
	}
	if rep := p.Report().(PublishReport); rep.Published {
		t.Errorf("report %+v", rep)
	}
}
