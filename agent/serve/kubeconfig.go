package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/credential"
	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/kubeconfig"
	"github.com/onekube/onekube/context/onegate"
)

// Kubeconfig answers the kubeconfig requests written into this master's
// USER_TEMPLATE (docs/kubeconfig.md). Every master runs it for its own
// requests (it is not LeaderOnly): the only cluster write is an idempotent
// apply of one user's binding, which any master may repeat.
//
// A request is untrusted (any VM of the service can write or rewrite one);
// it only picks an entry of the authorized list, which this loop reads from
// its own CONTEXT, a channel no VM can write, and a role up to the entry's
// maximum. Nothing is signed or bound on a request alone: the loop first
// answers with a challenge sealed to the entry's recipient, and acts only
// once the request carries the proof that its author opened it (protocol
// 2). The certificate's identity comes from the entry, and the payload is
// sealed to that entry's recipient alone.
type Kubeconfig struct {
	OneGate gate.OneGate
	// VMID is this master's VM ID: the extended service document is read
	// for this VM's CONTEXT.
	VMID int
	// Client applies the user's ClusterRoleBinding (admin.conf's client).
	Client kubernetes.Interface
	// CA loads the cluster CA; read at each tick with a request, so a
	// renewed CA is picked up.
	CA    func() (*credential.CA, error)
	Clock system.Clock
	Log   *slog.Logger
	// Idle is the tick while no answer waits (default 5 s): one GET /vm,
	// so a request waits at most that long. Busy is the tick while
	// answers wait to be fetched (default 2 s), to erase them soon after.
	Idle, Busy time.Duration
	// Users returns the authorized list's text; nil reads this VM's
	// CONTEXT from OneGate's extended service document.
	Users func(ctx context.Context) (string, error)
	// Rand is crypto/rand when nil.
	Rand io.Reader

	issued, refused int
	lastIssued      time.Time
	// pending holds the challenges sent, by request ID, in memory only:
	// after a restart a proved request is challenged again.
	pending map[string]pendingChallenge
}

// pendingChallenge is a challenge sent and not yet answered. stale is the
// proof the request carried when it was sent (one for an earlier
// challenge, erased by a sibling or lost in a restart): not an answer to
// this one, so the loop waits for the next.
type pendingChallenge struct {
	kubeconfig.Challenge
	at    time.Time
	stale string
}

// maxPending bounds the challenges remembered; beyond it new requests
// wait (they expire with AnswerTTL).
const maxPending = 64

var _ Loop = (*Kubeconfig)(nil)

// maxAnswersPerTick bounds the certificates one tick signs and the PUTs it
// sends, however many requests a hostile sibling writes.
const maxAnswersPerTick = 4

// Name implements Loop.
func (k *Kubeconfig) Name() string { return "kubeconfig" }

// exchange is one request ID's keys as found in USER_TEMPLATE.
type exchange struct {
	id                 string
	request, answer    string
	hasRequest, hasAns bool
}

// Tick implements Loop.
func (k *Kubeconfig) Tick(ctx context.Context) (time.Duration, error) {
	idle, busy := k.Idle, k.Busy
	if idle <= 0 {
		idle = 5 * time.Second
	}
	if busy <= 0 {
		busy = 2 * time.Second
	}
	vm, err := k.OneGate.GetVM(ctx)
	if err != nil {
		return 0, err
	}
	exs := scanExchanges(vm.UserTemplate)
	if len(exs) == 0 {
		return idle, nil
	}
	now := k.Clock.Now()
	var (
		waiting bool
		users   *authorized
		answers int
		errs    []error
	)
	for _, ex := range exs {
		switch {
		case ex.hasRequest && ex.request == kubeconfig.Done:
			delete(k.pending, ex.id)
			errs = append(errs, k.erase(ctx, ex, true, true))
		case ex.hasAns && ex.hasRequest && k.pending[ex.id].ID != "" && answerIsChallenge(ex.answer):
			// The challenge is out: act when the request carries a new proof.
			waiting = true
			if answers == maxAnswersPerTick {
				continue
			}
			if users == nil {
				users = k.authorized(ctx)
			}
			a, act, err := k.verify(ctx, ex.id, ex.request, users, now)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if act {
				answers++
				errs = append(errs, k.publish(ctx, ex.id, a))
			}
		case ex.hasAns:
			a, err := kubeconfig.ParseAnswer(ex.answer)
			switch {
			case err != nil:
				// Not ours (a sibling wrote it): erase it; the request,
				// if any, is answered again.
				k.Log.Warn("erasing a malformed kubeconfig answer", "request", ex.id, "error", err)
				errs = append(errs, k.erase(ctx, ex, true, false))
				waiting = waiting || ex.hasRequest
			case now.Sub(a.At) > kubeconfig.AnswerTTL || a.At.Sub(now) > kubeconfig.AnswerTTL:
				k.Log.Info("erasing a kubeconfig answer nobody fetched", "request", ex.id, "answered", a.At)
				delete(k.pending, ex.id)
				errs = append(errs, k.erase(ctx, ex, true, ex.hasRequest))
			case a.Challenge && ex.hasRequest:
				// A challenge this loop does not remember (it restarted, or
				// a sibling wrote it): challenge again once proved.
				waiting = true
				if answers == maxAnswersPerTick || requestProof(ex.request) == "" {
					continue
				}
				answers++
				if users == nil {
					users = k.authorized(ctx)
				}
				a, err := k.challenge(ex.id, ex.request, users, now)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				errs = append(errs, k.publish(ctx, ex.id, a))
			default:
				waiting = true
			}
		case ex.hasRequest:
			waiting = true
			if answers == maxAnswersPerTick {
				continue
			}
			answers++
			if users == nil {
				users = k.authorized(ctx)
			}
			a, err := k.challenge(ex.id, ex.request, users, now)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			errs = append(errs, k.publish(ctx, ex.id, a))
		}
	}
	k.forget(exs, now)
	next := idle
	if waiting {
		next = busy
	}
	return next, errors.Join(errs...)
}

// scanExchanges groups the request and answer keys by ID, in ID order.
func scanExchanges(ut map[string]string) []exchange {
	byID := map[string]*exchange{}
	for key, v := range ut {
		kind, id, ok := kubeconfig.ParseKey(key)
		if !ok {
			continue
		}
		ex := byID[id]
		if ex == nil {
			ex = &exchange{id: id}
			byID[id] = ex
		}
		if kind == kubeconfig.KindRequest {
			ex.request, ex.hasRequest = v, true
		} else {
			ex.answer, ex.hasAns = v, true
		}
	}
	out := make([]exchange, 0, len(byID))
	for _, ex := range byID {
		out = append(out, *ex)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// authorized is the list as read for one tick; err is why it could not be.
type authorized struct {
	users []kubeconfig.User
	err   error
}

func (k *Kubeconfig) authorized(ctx context.Context) *authorized {
	read := k.Users
	if read == nil {
		read = k.contextUsers
	}
	raw, err := read(ctx)
	if err != nil {
		return &authorized{err: err}
	}
	users, problems := kubeconfig.ParseUsers(raw)
	for _, p := range problems {
		k.Log.Warn("ignoring an entry of "+vmcontext.KeyKubeconfigUsers, "problem", p)
	}
	return &authorized{users: users}
}

// contextUsers reads KeyKubeconfigUsers from this VM's CONTEXT as oned
// holds it now, through GET /service?extended=true, which returns each
// node's full VM from a fresh one.vm.info (onegate-server.rb
// build_service_hash, release-7.4.0; 5.12+). So an owner's `onevm
// updateconf` takes effect at the next request, whether or not
// one-context in the VM has rewritten its copy yet.
func (k *Kubeconfig) contextUsers(ctx context.Context) (string, error) {
	svc, err := k.OneGate.GetServiceExtended(ctx)
	if err != nil {
		return "", fmt.Errorf("reading this VM's CONTEXT: %w", err)
	}
	for _, r := range svc.Roles {
		for _, n := range r.Nodes {
			if n.VMID == k.VMID && n.VM != nil && n.VM.Context != nil {
				return n.VM.Context[vmcontext.KeyKubeconfigUsers], nil
			}
		}
	}
	return "", fmt.Errorf("reading this VM's CONTEXT: the service document has no CONTEXT for VM %d", k.VMID)
}

// errNoRoom: too many challenges wait; the request waits too.
var errNoRoom = errors.New("too many kubeconfig challenges are pending")

// challenge decides a new request: a refusal (an Answer the CLI prints)
// when the authorized list does not allow it, otherwise a challenge sealed
// to the entry's recipient. Nothing is signed or bound here, so a request
// a sibling forged, even for a listed user with their public key, ends in
// a challenge nobody can answer. An error means try again later, and
// nothing is published.
func (k *Kubeconfig) challenge(id, raw string, users *authorized, now time.Time) (kubeconfig.Answer, error) {
	req, refusal, err := k.allowed(id, raw, users, now)
	if err != nil {
		return kubeconfig.Answer{}, err
	}
	if refusal != nil {
		return *refusal, nil
	}
	if k.pending == nil {
		k.pending = map[string]pendingChallenge{}
	}
	if _, ok := k.pending[id]; !ok && len(k.pending) >= maxPending {
		return kubeconfig.Answer{}, fmt.Errorf("request %s: %w", id, errNoRoom)
	}
	c, err := kubeconfig.NewChallenge(id, req, k.Rand)
	if err != nil {
		return kubeconfig.Answer{}, fmt.Errorf("request %s: %w", id, err)
	}
	plain, err := c.Marshal()
	if err != nil {
		return kubeconfig.Answer{}, fmt.Errorf("request %s: %w", id, err)
	}
	sealed, err := kubeconfig.Seal(plain, req.Recipient)
	if err != nil {
		return kubeconfig.Answer{}, fmt.Errorf("request %s: %w", id, err)
	}
	k.pending[id] = pendingChallenge{Challenge: c, at: now, stale: req.Proof}
	k.Log.Info("kubeconfig request challenged", "request", id, "user", req.Name, "role", req.Role,
		"ttl", req.TTL, "recipient", kubeconfig.Short(req.Recipient))
	return kubeconfig.Answer{At: now, Sealed: sealed, Challenge: true}, nil
}

// verify acts on a challenged request: act is false while it carries no
// new proof. A proof that does not match (the request was rewritten after
// it was challenged, or a sibling guessed) is refused; a matching one,
// still allowed by the list as read now, gets the binding and the
// certificate.
func (k *Kubeconfig) verify(ctx context.Context, id, raw string, users *authorized, now time.Time) (a kubeconfig.Answer, act bool, err error) {
	p := k.pending[id]
	if proof := requestProof(raw); proof == "" || proof == p.stale {
		return kubeconfig.Answer{}, false, nil
	}
	req, refusal, err := k.allowed(id, raw, users, now)
	if err != nil {
		return kubeconfig.Answer{}, false, err
	}
	if refusal != nil {
		delete(k.pending, id)
		return *refusal, true, nil
	}
	if !p.Proves(id, req) {
		delete(k.pending, id)
		return k.refuse(id, now, "the proof does not answer this master's challenge: the request was changed after it was challenged, or the proof is not its requester's (another VM of the service can write requests); run again"), true, nil
	}
	a, err = k.issue(ctx, id, req, now)
	if err != nil {
		return kubeconfig.Answer{}, false, err
	}
	delete(k.pending, id)
	return a, true, nil
}

// allowed parses a request and checks it against the authorized list:
// a listed name with that recipient, and a role up to the entry's
// maximum. refusal is non-nil when it is not; err means try again later.
func (k *Kubeconfig) allowed(id, raw string, users *authorized, now time.Time) (kubeconfig.Request, *kubeconfig.Answer, error) {
	refuse := func(reason string) (kubeconfig.Request, *kubeconfig.Answer, error) {
		a := k.refuse(id, now, reason)
		return kubeconfig.Request{}, &a, nil
	}
	req, err := kubeconfig.ParseRequest(raw)
	if errors.Is(err, kubeconfig.ErrOldProtocol) {
		// In protocol 1's answer format, which an old onekube-flow prints.
		a := k.refuse(id, now, "this master needs onekube-flow with kubeconfig protocol 2 (a challenge before it signs): upgrade onekube-flow")
		a.Legacy = true
		return kubeconfig.Request{}, &a, nil
	}
	if err != nil {
		return refuse(err.Error())
	}
	if users.err != nil {
		if gate.IsRetryable(users.err) {
			return kubeconfig.Request{}, nil, users.err
		}
		return refuse("this master cannot read its authorized users: " + users.err.Error())
	}
	entry, ok := kubeconfig.Lookup(users.users, req.Name, req.Recipient)
	if !ok {
		for _, u := range users.users {
			if u.Name == req.Name {
				return refuse(fmt.Sprintf("recipient %s is not authorized for user %s on this master (%s)", kubeconfig.Short(req.Recipient), req.Name, vmcontext.KeyKubeconfigUsers))
			}
		}
		return refuse(fmt.Sprintf("user %s is not authorized on this master (%s in its CONTEXT)", req.Name, vmcontext.KeyKubeconfigUsers))
	}
	if !kubeconfig.Allows(entry.MaxRole, req.Role) {
		return refuse(fmt.Sprintf("user %s may have at most the %s role on this master, not %s: the owner raises it with the entry name:key:%s in %s",
			req.Name, entry.MaxRole, req.Role, req.Role, vmcontext.KeyKubeconfigUsers))
	}
	return req, nil, nil
}

func (k *Kubeconfig) refuse(id string, now time.Time, reason string) kubeconfig.Answer {
	k.refused++
	k.Log.Info("kubeconfig request refused", "request", id, "reason", reason)
	return kubeconfig.Answer{At: now, Reason: reason}
}

// issue binds and signs for a proved request. An error means try again
// later (the API server failed), and nothing is published.
func (k *Kubeconfig) issue(ctx context.Context, id string, req kubeconfig.Request, now time.Time) (kubeconfig.Answer, error) {
	ca, err := k.CA()
	if err != nil {
		k.Log.Error("cannot sign kubeconfig certificates", "error", err)
		return k.refuse(id, now, "this master cannot sign certificates: "+err.Error()), nil
	}
	if err := credential.Grant(ctx, k.Client, req.Name, req.Role); err != nil {
		return kubeconfig.Answer{}, fmt.Errorf("request %s: %w", id, err)
	}
	cert, err := ca.Issue(req.Name, kubeconfig.Group(req.Name, req.Role), req.TTL, now, k.Rand)
	if err != nil {
		return k.refuse(id, now, err.Error()), nil
	}
	plain, err := kubeconfig.Payload{ID: id, User: req.Name, Role: req.Role, CAPEM: ca.CertPEM,
		CertPEM: cert.CertPEM, Key: cert.Key, NotAfter: cert.NotAfter}.Marshal()
	if err != nil {
		return kubeconfig.Answer{}, fmt.Errorf("request %s: %w", id, err)
	}
	sealed, err := kubeconfig.Seal(plain, req.Recipient)
	if err != nil {
		return kubeconfig.Answer{}, fmt.Errorf("request %s: %w", id, err)
	}
	k.issued++
	k.lastIssued = now
	k.Log.Info("kubeconfig issued", "request", id, "user", req.Name, "role", req.Role,
		"not_after", cert.NotAfter.UTC().Format(time.RFC3339), "recipient", kubeconfig.Short(req.Recipient))
	return kubeconfig.Answer{At: now, Sealed: sealed}, nil
}

// forget drops remembered challenges whose request is gone or older than
// AnswerTTL.
func (k *Kubeconfig) forget(exs []exchange, now time.Time) {
	if len(k.pending) == 0 {
		return
	}
	live := map[string]bool{}
	for _, ex := range exs {
		if ex.hasRequest && ex.request != kubeconfig.Done {
			live[ex.id] = true
		}
	}
	for id, p := range k.pending {
		if !live[id] || now.Sub(p.at) > kubeconfig.AnswerTTL {
			delete(k.pending, id)
		}
	}
}

// answerIsChallenge tells a challenge answer without opening anything.
func answerIsChallenge(v string) bool {
	a, err := kubeconfig.ParseAnswer(v)
	return err == nil && a.Challenge
}

// requestProof is a request value's proof, "" for none or a value that
// does not parse.
func requestProof(v string) string {
	r, err := kubeconfig.ParseRequest(v)
	if err != nil {
		return ""
	}
	return r.Proof
}

func (k *Kubeconfig) publish(ctx context.Context, id string, a kubeconfig.Answer) error {
	v, err := a.Encode()
	if err != nil {
		return fmt.Errorf("request %s: %w", id, err)
	}
	if err := k.OneGate.UpdateVM(ctx, onegate.KV{Key: kubeconfig.AnswerKey(id), Value: v}); err != nil {
		return fmt.Errorf("publishing the answer to request %s: %w", id, err)
	}
	return nil
}

// erase deletes an exchange's answer and then its request (OneGate erases
// one key per call). Answer first: should the second call fail, a request
// marked done is erased at the next tick, while an answer left behind
// would wait for its timeout.
func (k *Kubeconfig) erase(ctx context.Context, ex exchange, answer, request bool) error {
	var keys []string
	if answer && ex.hasAns {
		keys = append(keys, kubeconfig.AnswerKey(ex.id))
	}
	if request && ex.hasRequest {
		keys = append(keys, kubeconfig.RequestKey(ex.id))
	}
	if len(keys) == 0 {
		return nil
	}
	return gate.EraseKeys(ctx, k.OneGate, keys...)
}

// Report implements Reporter (counts only; no names or keys).
func (k *Kubeconfig) Report() any {
	r := map[string]any{"issued": k.issued, "refused": k.refused}
	if !k.lastIssued.IsZero() {
		r["last_issued"] = k.lastIssued.UTC().Format(time.RFC3339)
	}
	return r
}
