package access

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/OpenNebula/one/src/oca/go/src/goca/schemas/vm"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/kubeconfig"
	"github.com/onekube/onekube/flow/status"
)

// VMs is what Fetch needs of oned; register.OnedVMs implements it.
type VMs interface {
	Info(ctx context.Context, id int) (*vm.VM, error)
	Merge(ctx context.Context, id int, text string) error
}

// Errors of Fetch, for exit codes and tests; every one comes with a
// message saying what to do.
var (
	ErrNotReady      = errors.New("the cluster is not ready")
	ErrNotAuthorized = errors.New("not authorized")
	ErrNoAnswer      = errors.New("no answer")
	ErrRefused       = errors.New("refused")
)

// Client fetches kubeconfigs.
type Client struct {
	Flow status.Flow
	VMs  VMs
	// RequestTimeout bounds each oned or OneFlow call.
	RequestTimeout time.Duration
	Now            func() time.Time
	Sleep          func(context.Context, time.Duration) error
	// Poll is the pause between reads of the master while waiting
	// (default 1 s, jittered).
	Poll time.Duration
	Rand io.Reader // request IDs; crypto/rand when nil
	// Progress receives one line per step worth telling (stderr).
	Progress func(string)
}

// Want is what the user asked for.
type Want struct {
	Service  string // ID or name
	Identity Identity
	As       string // the entry's name; "" when the key names one entry
	Role     string // "" for the entry's maximum role
	TTL      time.Duration
}

// Target is the master a request goes to and what oned says of it.
type Target struct {
	ServiceID   int
	ServiceName string
	Master      *vm.VM
	Server      string
	User        string // the authorized entry's name
	MaxRole     string // the most the entry may ask for
	Role        string // what is asked: Want.Role, else MaxRole
}

// Result is a fetched, checked credential.
type Result struct {
	Target
	Payload kubeconfig.Payload
	Cert    *x509.Certificate
}

// Locate finds the service's first ready master, the user's entry in its
// authorized list and the API server address, without writing anything.
func (c *Client) Locate(ctx context.Context, w Want) (Target, error) {
	sf := &status.Fetcher{Flow: c.Flow, Timeout: c.RequestTimeout}
	id, err := sf.Resolve(ctx, w.Service)
	if err != nil {
		return Target{}, err
	}
	rctx, cancel := c.timeout(ctx)
	b, err := c.Flow.Service(rctx, id)
	cancel()
	if err != nil {
		return Target{}, fmt.Errorf("reading service %d: %w", id, err)
	}
	svc, err := status.DecodeService(b)
	if err != nil {
		return Target{}, fmt.Errorf("reading service %d: %w", id, err)
	}
	t := Target{ServiceID: id, ServiceName: svc.Name}
	master, err := c.readyMaster(ctx, svc)
	if err != nil {
		return t, err
	}
	t.Master = master
	u, err := pickUser(master, w)
	if err != nil {
		return t, err
	}
	t.User, t.MaxRole, t.Role = u.Name, u.MaxRole, w.Role
	if t.Role == "" {
		t.Role = u.MaxRole
	}
	if !kubeconfig.Allows(u.MaxRole, t.Role) {
		return t, fmt.Errorf("%w: master VM %d authorizes %s for at most the %s role, not %s (%s); ask the owner to list you as %s:<your key>:%s, or ask for --role %s",
			ErrNotAuthorized, master.ID, u.Name, u.MaxRole, t.Role, vmcontext.KeyKubeconfigUsers, u.Name, t.Role, u.MaxRole)
	}
	if t.Server, err = Server(master); err != nil {
		return t, err
	}
	return t, nil
}

// readyMaster picks the master to ask: running, READY=YES, lowest VM ID,
// preferring one whose serve loop announced itself (ONEGATE_K8S_SERVE).
// With none, the error is ErrNotReady (exit 3, "run again later") only
// when every master was read and found still coming up; a master that
// could not be read at all (wrong credentials, no right to the VM, a
// redirect, an answer not oned's, a timeout) is a failure of its own,
// which waiting does not mend.
func (c *Client) readyMaster(ctx context.Context, svc status.Service) (*vm.VM, error) {
	var ids []int
	for _, r := range svc.Roles {
		if r.Name == vmcontext.DefaultMasterRole {
			ids = append(ids, r.VMIDs...)
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: service %d (%s) has no %s VM yet: onekube-flow status %d --wait 20m", ErrNotReady, svc.ID, svc.Name, vmcontext.DefaultMasterRole, svc.ID)
	}
	sort.Ints(ids)
	var ready []*vm.VM
	var why, unread []string
	var readErrs []error
	for _, id := range ids {
		rctx, cancel := c.timeout(ctx)
		v, err := c.VMs.Info(rctx, id)
		cancel()
		if err != nil {
			unread = append(unread, fmt.Sprintf("VM %d: %v", id, err))
			readErrs = append(readErrs, err)
			continue
		}
		ready1, reason := masterReady(v)
		if !ready1 {
			why = append(why, fmt.Sprintf("VM %d: %s", id, reason))
			continue
		}
		ready = append(ready, v)
	}
	switch {
	case len(ready) > 0:
	case len(unread) > 0:
		return nil, &causes{fmt.Sprintf("reading the masters of service %d (%s): %s",
			svc.ID, svc.Name, strings.Join(append(unread, why...), "; ")), readErrs}
	default:
		return nil, fmt.Errorf("%w: no master of service %d (%s) is ready (%s): onekube-flow status %d --wait 20m",
			ErrNotReady, svc.ID, svc.Name, strings.Join(why, "; "), svc.ID)
	}
	for _, v := range ready {
		if s, _ := v.UserTemplate.GetStr(vmcontext.KeyPubServe); s != "" {
			return v, nil
		}
	}
	return ready[0], nil
}

// masterReady: ACTIVE/RUNNING with READY=YES.
func masterReady(v *vm.VM) (bool, string) {
	if v.StateRaw != 3 || v.LCMStateRaw != 3 {
		st, lcm, _ := v.StateString()
		return false, fmt.Sprintf("%s/%s, not running", st, lcm)
	}
	if r, _ := v.UserTemplate.GetStr(vmcontext.KeyReady); !strings.EqualFold(strings.TrimSpace(r), "YES") {
		return false, "not READY"
	}
	return true, ""
}

// pickUser finds the entry of the master's authorized list that names the
// user's key.
func pickUser(master *vm.VM, w Want) (kubeconfig.User, error) {
	raw, ok := contextOf(master).Lookup(vmcontext.KeyKubeconfigUsers)
	if !ok {
		return kubeconfig.User{}, fmt.Errorf("%w: master VM %d has no %s in its CONTEXT: its templates predate kubeconfig access; add the variable with onevm updateconf (docs/kubeconfig.md)",
			ErrNotAuthorized, master.ID, vmcontext.KeyKubeconfigUsers)
	}
	users, _ := kubeconfig.ParseUsers(raw)
	mine := kubeconfig.ByRecipient(users, w.Identity.Recipient)
	if w.As != "" {
		var named []kubeconfig.User
		for _, u := range mine {
			if u.Name == w.As {
				named = append(named, u)
			}
		}
		mine = named
	}
	switch {
	case len(mine) == 1:
		return mine[0], nil
	case len(mine) > 1:
		var names []string
		for _, u := range mine {
			names = append(names, u.Name)
		}
		return kubeconfig.User{}, fmt.Errorf("%w: your key is authorized as %s; pick one with --as", ErrNotAuthorized, strings.Join(names, ", "))
	}
	var names []string
	for _, u := range users {
		names = append(names, u.Name)
	}
	who := "nobody"
	if len(names) > 0 {
		who = strings.Join(names, ", ")
	}
	as := ""
	if w.As != "" {
		as = " as " + w.As
	}
	return kubeconfig.User{}, fmt.Errorf("%w: master VM %d authorizes %s (%s), not your key %s%s; the owner adds it as in \"Authorize a user\" of docs/kubeconfig.md, with your public key %s",
		ErrNotAuthorized, master.ID, who, vmcontext.KeyKubeconfigUsers, kubeconfig.Short(w.Identity.Recipient), as, w.Identity.Recipient)
}

// Fetch asks the master Locate picked for a credential and waits for its
// answer until ctx ends: first a challenge sealed to the user's key, whose
// proof it writes back into the request, then the sealed credential. The
// request is marked done once read (or given up on), so the master
// erases both at once.
func (c *Client) Fetch(ctx context.Context, t Target, w Want) (Result, error) {
	req := kubeconfig.Request{Name: t.User, Role: t.Role, TTL: w.TTL, Recipient: w.Identity.Recipient}
	value, err := req.Encode()
	if err != nil {
		return Result{}, err
	}
	id, err := kubeconfig.NewID(c.Rand)
	if err != nil {
		return Result{}, err
	}
	mid := t.Master.ID
	sent := c.now()
	if err := c.writeRequest(ctx, mid, id, value); err != nil {
		return Result{}, err
	}
	c.progress(fmt.Sprintf("asked master VM %d for a %s kubeconfig for %s (request %s, valid %s)", mid, t.Role, t.User, id, w.TTL))
	defer c.markDone(mid, id)

	started := c.now()
	proved := "" // the challenge last answered
	for {
		if err := c.sleep(ctx); err != nil {
			return Result{}, c.noAnswer(t.Master, c.now().Sub(started))
		}
		rctx, cancel := c.timeout(ctx)
		v, err := c.VMs.Info(rctx, mid)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return Result{}, c.noAnswer(t.Master, c.now().Sub(started))
			}
			if lasting(err) {
				return Result{}, fmt.Errorf("waiting for master VM %d's answer: %w", mid, err)
			}
			c.progress(fmt.Sprintf("reading master VM %d failed, retrying: %v", mid, err))
			continue
		}
		t.Master = v
		raw, err := v.UserTemplate.GetStr(kubeconfig.AnswerKey(id))
		if err != nil || raw == "" {
			if r, err := v.UserTemplate.GetStr(kubeconfig.RequestKey(id)); err != nil || r == "" {
				return Result{}, fmt.Errorf("%w: the request vanished from master VM %d unanswered (another VM of the service can erase it): run again", ErrNoAnswer, mid)
			}
			continue
		}
		a, err := c.parseAnswer(mid, raw)
		if err != nil {
			return Result{}, err
		}
		if !a.Challenge {
			return c.open(t, w, id, req, a, sent)
		}
		if a.Sealed == proved {
			continue // the master has not read the proof yet
		}
		proof, err := c.prove(mid, id, req, w, a)
		if err != nil {
			return Result{}, err
		}
		if err := c.writeRequest(ctx, mid, id, proof); err != nil {
			return Result{}, err
		}
		proved = a.Sealed
		c.progress(fmt.Sprintf("answered master VM %d's challenge with your key", mid))
	}
}

func (c *Client) writeRequest(ctx context.Context, mid int, id, value string) error {
	rctx, cancel := c.timeout(ctx)
	err := c.VMs.Merge(rctx, mid, fmt.Sprintf("%s = \"%s\"\n", kubeconfig.RequestKey(id), value))
	cancel()
	if err != nil {
		return fmt.Errorf("writing the request into master VM %d (it takes MANAGE on the VM): %w", mid, err)
	}
	return nil
}

// parseAnswer reads an answer value; a refusal is an error.
func (c *Client) parseAnswer(mid int, raw string) (kubeconfig.Answer, error) {
	a, err := kubeconfig.ParseAnswer(raw)
	if err != nil {
		return a, fmt.Errorf("%w: the answer in master VM %d is not one a master writes (another VM of the service may have written it): %v", kubeconfig.ErrTampered, mid, err)
	}
	switch {
	case a.Legacy:
		return a, fmt.Errorf("%w: master VM %d runs an older onekubed, which speaks %v and refused: %s; upgrade onekubed on the masters, or use the onekube-flow of its release",
			ErrRefused, mid, kubeconfig.ErrOldProtocol, a.Reason)
	case a.Sealed == "":
		return a, fmt.Errorf("%w: master VM %d refused: %s", ErrRefused, mid, a.Reason)
	}
	return a, nil
}

// prove opens a challenge and returns the request value carrying its
// proof. The challenge must name this request exactly as it was written:
// one naming other fields means a sibling rewrote the request before the
// master read it, and proving it would vouch for what the user did not
// ask.
func (c *Client) prove(mid int, id string, req kubeconfig.Request, w Want, a kubeconfig.Answer) (string, error) {
	plain, err := kubeconfig.Open(a.Sealed, w.Identity.Identities()...)
	switch {
	case errors.Is(err, kubeconfig.ErrNotForYou):
		return "", fmt.Errorf("your key %s cannot open the challenge in master VM %d: %w (or its recipient was altered)", w.Identity.Path, mid, err)
	case err != nil:
		return "", fmt.Errorf("the challenge in master VM %d: %w", mid, err)
	}
	ch, err := kubeconfig.ParseChallenge(plain)
	if err != nil {
		return "", fmt.Errorf("%w: the challenge in master VM %d opened, but: %v", kubeconfig.ErrTampered, mid, err)
	}
	if ch.ID != id || ch.Request != req.Asked() {
		return "", fmt.Errorf("%w: master VM %d challenged request %s for %s as %s valid %s, but this was request %s for %s as %s valid %s: another VM of the service rewrote it; nothing was proved, run again",
			ErrMismatch, mid, ch.ID, ch.Request.Name, ch.Request.Role, ch.Request.TTL, id, req.Name, req.Role, req.TTL)
	}
	proved := req
	if proved.Proof, err = ch.Proof(id, req); err != nil {
		return "", err
	}
	return proved.Encode()
}

func (c *Client) open(t Target, w Want, id string, req kubeconfig.Request, a kubeconfig.Answer, sent time.Time) (Result, error) {
	mid := t.Master.ID
	plain, err := kubeconfig.Open(a.Sealed, w.Identity.Identities()...)
	switch {
	case errors.Is(err, kubeconfig.ErrNotForYou):
		return Result{}, fmt.Errorf("your key %s cannot open the answer in master VM %d: %w (or its recipient was altered)", w.Identity.Path, mid, err)
	case err != nil:
		return Result{}, fmt.Errorf("the answer in master VM %d: %w", mid, err)
	}
	p, err := kubeconfig.ParsePayload(plain)
	if err != nil {
		return Result{}, fmt.Errorf("%w: the answer in master VM %d opened, but: %v", kubeconfig.ErrTampered, mid, err)
	}
	cert, err := CheckPayload(p, id, req, sent, c.now())
	if err != nil {
		return Result{}, fmt.Errorf("the answer in master VM %d %w", mid, err)
	}
	return Result{Target: t, Payload: p, Cert: cert}, nil
}

// markDone tells the master it may erase the exchange. It runs after the
// caller's context may have ended, so it has its own short one; failing
// only leaves the answer until the master's timeout.
func (c *Client) markDone(mid int, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), c.requestTimeout())
	defer cancel()
	if err := c.VMs.Merge(ctx, mid, fmt.Sprintf("%s = \"%s\"\n", kubeconfig.RequestKey(id), kubeconfig.Done)); err != nil {
		c.progress(fmt.Sprintf("could not mark request %s done on master VM %d (the master erases it after %s anyway): %v", id, mid, kubeconfig.AnswerTTL, err))
	}
}

func (c *Client) noAnswer(master *vm.VM, waited time.Duration) error {
	serve, _ := master.UserTemplate.GetStr(vmcontext.KeyPubServe)
	hint := "onekube-serve is not running there (no " + vmcontext.KeyPubServe + ")"
	if serve != "" {
		hint = fmt.Sprintf("its serve loop announced itself (%s=%s) but did not answer; see journalctl -u onekube-serve on it", vmcontext.KeyPubServe, serve)
	}
	return fmt.Errorf("%w: master VM %d did not answer within %s: %s", ErrNoAnswer, master.ID, waited.Round(time.Second), hint)
}

func (c *Client) sleep(ctx context.Context) error {
	d := c.Poll
	if d <= 0 {
		d = time.Second
	}
	d = d*3/4 + rand.N(d/2+1) // jitter, so several users do not poll in step
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Client) progress(s string) {
	if c.Progress != nil {
		c.Progress(s)
	}
}

func (c *Client) requestTimeout() time.Duration {
	if c.RequestTimeout > 0 {
		return c.RequestTimeout
	}
	return 30 * time.Second
}

func (c *Client) timeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.requestTimeout())
}
