package serve

import (
	"context"
	"time"

	"github.com/onekube/onekube/agent/gate"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// Serve modes published as ONEGATE_K8S_SERVE.
const (
	ModeActing  = "acting"
	ModeStandby = "standby"
)

// Presence publishes whether this master acts (ONEGATE_K8S_SERVE), so
// `onekube-flow status` can say who acts without cluster credentials. It
// writes only on a change: the first tick reads what this VM already
// shows, so a restart costs one GET, not a PUT.
type Presence struct {
	OneGate gate.OneGate
	Board   *StatusBoard
	// Every is the idle tick (default 15 s): a change of leader shows in
	// OneGate within it.
	Every time.Duration

	published string // "" until known
}

var _ Loop = (*Presence)(nil)

// Name implements Loop.
func (p *Presence) Name() string { return "presence" }

// Tick implements Loop.
func (p *Presence) Tick(ctx context.Context) (time.Duration, error) {
	every := p.Every
	if every <= 0 {
		every = 15 * time.Second
	}
	if p.published == "" {
		vm, err := p.OneGate.GetVM(ctx)
		if err != nil {
			return 0, err
		}
		p.published = vm.UserTemplate[vmcontext.KeyPubServe]
		if p.published == "" {
			p.published = "-" // known to be absent
		}
	}
	want := ModeStandby
	if p.Board.Acting() {
		want = ModeActing
	}
	if want == p.published {
		return every, nil
	}
	if err := p.OneGate.UpdateVM(ctx, onegate.KV{Key: vmcontext.KeyPubServe, Value: want}); err != nil {
		return 0, err
	}
	p.published = want
	return every, nil
}

// Report implements Reporter.
func (p *Presence) Report() any { return map[string]string{"published": p.published} }
