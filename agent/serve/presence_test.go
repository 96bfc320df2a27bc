package serve

import (
	"context"
	"testing"

	"github.com/onekube/onekube/agent/gate"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// fakeOneGate is this VM's USER_TEMPLATE in memory, counting requests.
type fakeOneGate struct {
	gate.OneGate // other methods are not used by these loops
	ut           map[string]string
	gets, puts   int
}

func (f *fakeOneGate) GetVM(context.Context) (*onegate.VM, error) {
	f.gets++
	ut := map[string]string{}
	for k, v := range f.ut {
		ut[k] = v
	}
	return &onegate.VM{ID: 7, UserTemplate: ut}, nil
}

func (f *fakeOneGate) UpdateVM(_ context.Context, kvs ...onegate.KV) error {
	f.puts++
	for _, kv := range kvs {
		f.ut[kv.Key] = kv.Value
	}
	return nil
}

// Presence writes only when the mode changes, and a restart that finds the
// right value already published writes nothing.
func TestPresencePublishesChangesOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	og := &fakeOneGate{ut: map[string]string{}}
	board := NewStatusBoard("")
	p := &Presence{OneGate: og, Board: board}
	steps := []struct {
		acting     bool
		want       string
		wantPuts   int
		restartNow bool
	}{
		{false, ModeStandby, 1, false},
		{false, ModeStandby, 1, false},
		{true, ModeActing, 2, false},
		{true, ModeActing, 2, true},
		{false, ModeStandby, 3, false},
	}
	for i, s := range steps {
		if s.restartNow {
			p = &Presence{OneGate: og, Board: board}
		}
		board.setActing(s.acting, "")
		if _, err := p.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		if got := og.ut[vmcontext.KeyPubServe]; got != s.want {
			t.Errorf("step %d: published %q, want %q", i, got, s.want)
		}
		if og.puts != s.wantPuts {
			t.Errorf("step %d: %d PUTs, want %d", i, og.puts, s.wantPuts)
		}
	}
	if og.gets != 2 {
		t.Errorf("%d GETs, want one per start", og.gets)
	}
}
