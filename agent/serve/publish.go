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
//
// With Facts set it also keeps this master's own join facts (joinfacts.go)
// as they are: any sibling may rewrite them under the default
// onegate-server.conf, and bootstrap published them once. It reads this
// VM back (GET /vm) before it shows a new token, so that the token and
// any repair go in one PUT, then every Check while a token is shown (a VM
// is joining) and every IdleCheck while none is (nobody can join from
// it then, so an idle cluster pays only IdleCheck).
type Publish struct {
	OneGate gate.OneGate
	Client  kubernetes.Interface
	Clock   system.Clock
	Log     *slog.Logger
	// Every is the tick (default 3 s): a minted token shows in OneGate
	// within it.
	Every time.Duration
	// Facts is this master's own join data (OwnJoinFacts); nil leaves it
	// unchecked.
	Facts JoinFacts
	// Check (default 10 s) and IdleCheck (default 30 min) pace the
	// comparison of Facts with what OneGate shows, with and without a
	// token shown.
	Check, IdleCheck time.Duration

	known   bool
	shown   shownToken
	checked time.Time
	// repairs counts the facts put back, for the status.
	repairs int
}

// Defaults of the publish loop: its tick, and how often it compares its
// join facts with OneGate while a token is shown and while none is.
const (
	DefaultPublishEvery = 3 * time.Second
	DefaultFactsCheck   = 10 * time.Second
	DefaultFactsIdle    = 30 * time.Minute
)

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
	var self *onegate.VM
	if !p.known {
		vm, err := p.OneGate.GetVM(ctx)
		if err != nil {
			return 0, err
		}
		// Its own keys, read back only to skip a write: a forged value
		// makes serve publish the current token again, nothing else.
		p.shown = shownToken{token: vmcontext.NewSecret(vm.Claim(vmcontext.KeyPubToken).Unverified()), expires: vm.Claim(vmcontext.KeyPubTokenExpires).Unverified()}
		p.known = true
		self = vm
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
	changed := !want.same(p.shown)
	fix, err := p.checkFacts(ctx, self, changed && !want.token.IsZero(), !want.token.IsZero() || !p.shown.token.IsZero())
	if err != nil {
		return 0, err
	}
	if !changed {
		return every, p.restore(ctx, fix)
	}
	if want.token.IsZero() {
		if err := p.erase(ctx); err != nil {
			return 0, err
		}
		p.Log.Info("no join token: erased from OneGate")
		if err := p.restore(ctx, fix); err != nil {
			return 0, err
		}
	} else {
		// The repair rides in the token's PUT: a worker never sees this
		// token beside forged join data this loop had read.
		kvs := append(fix, onegate.KV{Key: vmcontext.KeyPubToken, Value: want.token.Reveal()})
		if want.expires != "" {
			kvs = append(kvs, onegate.KV{Key: vmcontext.KeyPubTokenExpires, Value: want.expires})
		}
		if err := p.OneGate.UpdateVM(ctx, kvs...); err != nil {
			p.checked = time.Time{} // read again on the next tick
			return 0, fmt.Errorf("publishing the join token: %w", err)
		}
		p.repairs += len(fix)
		p.Log.Info("join token published", "expires", want.expires)
	}
	p.shown = want
	return every, nil
}

// checkFacts compares Facts with what this VM shows and returns those to
// put back, logging the rewrite. self is this VM when the tick read it
// already; now asks for a fresh read (a token is about to be shown);
// busy is whether a token is or was shown, which picks the pace. A
// failed read fails the tick; facts that cannot be computed (ca.crt
// unreadable) only warn: the token must still be shown.
func (p *Publish) checkFacts(ctx context.Context, self *onegate.VM, now, busy bool) ([]onegate.KV, error) {
	if p.Facts == nil {
		return nil, nil
	}
	pace := p.Check
	if pace <= 0 {
		pace = DefaultFactsCheck
	}
	if !busy {
		pace = p.IdleCheck
		if pace <= 0 {
			pace = DefaultFactsIdle
		}
	}
	if self == nil && !now && p.Clock.Now().Sub(p.checked) < pace {
		return nil, nil
	}
	if self == nil {
		vm, err := p.OneGate.GetVM(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading this VM back to check its join data: %w", err)
		}
		self = vm
	}
	p.checked = p.Clock.Now()
	facts, err := p.Facts()
	if err != nil {
		p.Log.Warn("cannot check this master's join data in OneGate", "error", err)
		return nil, nil
	}
	fix := drifted(self.UserTemplate, facts)
	if len(fix) > 0 {
		// A sibling VM (any VM of the service may write here under the
		// default onegate-server.conf) or a hand rewrote what bootstrap
		// published; a worker would wait on it or fail its join.
		p.Log.Warn("this master's join data in OneGate was rewritten (by a sibling VM or by hand); restoring it",
			"shown", driftNote(self.UserTemplate, fix))
	}
	return fix, nil
}

// restore puts fix back; a failure makes the next tick read again.
func (p *Publish) restore(ctx context.Context, fix []onegate.KV) error {
	if len(fix) == 0 {
		return nil
	}
	if err := p.OneGate.UpdateVM(ctx, fix...); err != nil {
		p.checked = time.Time{}
		return fmt.Errorf("restoring the join data: %w", err)
	}
	p.repairs += len(fix)
	return nil
}

// erase removes both keys, those this VM holds. The token goes first: a
// reader in between sees an expiry without a token and waits, never a
// token without its expiry.
func (p *Publish) erase(ctx context.Context) error {
	return gate.EraseKeys(ctx, p.OneGate, vmcontext.KeyPubToken, vmcontext.KeyPubTokenExpires)
}

// Report implements Reporter.
func (p *Publish) Report() any {
	return PublishReport{Published: !p.shown.token.IsZero(), Expires: p.shown.expires, JoinDataRestored: p.repairs}
}
