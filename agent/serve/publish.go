package serve

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// Publish mirrors the current join token and its expiry into this
// master's USER_TEMPLATE (ONEGATE_K8S_TOKEN, ONEGATE_K8S_TOKEN_EXPIRES),
// and erases both when there is none, on every master: a worker may take
// the join data from any ready master, so none may show a token the
// cluster has deleted. The current token is read from the API server (the
// longest-living onekube token), which costs OneGate nothing; OneGate is
// written only on a change, and read once per start to learn what this
// VM already shows.
type Publish struct {
	OneGate gate.OneGate
	Client  kubernetes.Interface
	Clock   system.Clock
	Log     *slog.Logger
	// Every is the tick (default 3 s): a minted token shows in OneGate
	// within it.
	Every time.Duration

	known bool
	shown shownToken
}

// DefaultPublishEvery is the publish loop's tick.
const DefaultPublishEvery = 3 * time.Second

// shownToken is what this VM's USER_TEMPLATE shows.
type shownToken struct {
	token   vmcontext.Secret
	expires string
}

func (s shownToken) same(o shownToken) bool {
	return s.token.Reveal() == o.token.Reveal() && s.expires == o.expires
}

var (
	_ Loop     = (*Publish)(nil)
	_ Reporter = (*Publish)(nil)
)

// Name implements Loop.
func (p *Publish) Name() string { return "publish" }

// Tick implements Loop.
func (p *Publish) Tick(ctx context.Context) (time.Duration, error) {
	if p.Clock == nil {
		p.Clock = system.RealClock{}
	}
	if p.Log == nil {
		p.Log = slog.New(slog.DiscardHandler)
	}
	every := p.Every
	if every <= 0 {
		every = DefaultPublishEvery
	}
	if !p.known {
		vm, err := p.OneGate.GetVM(ctx)
		if err != nil {
			return 0, err
		}
		// Its own keys, read back only to skip a write: a forged value
		// makes serve publish the current token again, nothing else.
		p.shown = shownToken{token: vmcontext.NewSecret(vm.Claim(vmcontext.KeyPubToken).Unverified()), expires: vm.Claim(vmcontext.KeyPubTokenExpires).Unverified()}
		p.known = true
	}
	toks, err := ownedTokens(ctx, p.Client)
	if err != nil {
		return 0, err
	}
	var want shownToken
	if cur, ok := current(toks, p.Clock.Now()); ok {
		want.token = cur.Token
		if !cur.Expires.IsZero() {
			want.expires = cur.Expires.UTC().Format(time.RFC3339)
		}
	}
	if want.same(p.shown) {
		return every, nil
	}
	if want.token.IsZero() {
		if err := p.erase(ctx); err != nil {
			return 0, err
		}
		p.Log.Info("no join token: erased from OneGate")
	} else {
		kvs := []onegate.KV{{Key: vmcontext.KeyPubToken, Value: want.token.Reveal()}}
		if want.expires != "" {
			kvs = append(kvs, onegate.KV{Key: vmcontext.KeyPubTokenExpires, Value: want.expires})
		}
		if err := p.OneGate.UpdateVM(ctx, kvs...); err != nil {
			return 0, fmt.Errorf("publishing the join token: %w", err)
		}
		p.Log.Info("join token published", "expires", want.expires)
	}
	p.shown = want
	return every, nil
}

// erase removes both keys, those this VM holds. The token goes first: a
// reader in between sees an expiry without a token and waits, never a
// token without its expiry.
func (p *Publish) erase(ctx context.Context) error {
	return gate.EraseKeys(ctx, p.OneGate, vmcontext.KeyPubToken, vmcontext.KeyPubTokenExpires)
}

// Report implements Reporter.
func (p *Publish) Report() any {
	return PublishReport{Published: !p.shown.token.IsZero(), Expires: p.shown.expires}
}
