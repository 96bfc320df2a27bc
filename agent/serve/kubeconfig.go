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

	"github.com/onekube/onekube/agent"
	"github.com/onekube/onekube/agent/credential"
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
// A request is untrusted (any VM of the service can write one); it only
// picks an entry of the authorized list, which this loop reads from its own
// CONTEXT, a channel no VM can write. The certificate's identity comes from
// that entry, and the payload is sealed to that entry's recipient alone.
type Kubeconfig struct {
	OneGate agent.OneGate
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
}

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
			errs = append(errs, k.erase(ctx, ex, true, true))
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
				errs = append(errs, k.erase(ctx, ex, true, ex.hasRequest))
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
			a, err := k.answer(ctx, ex.id, ex.request, users, now)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			errs = append(errs, k.publish(ctx, ex.id, a))
		}
	}
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

// answer decides one request. A refusal is an Answer too (the CLI prints
// its reason); an error means try again later (the API server or OneGate
// failed), and nothing is published.
func (k *Kubeconfig) answer(ctx context.Context, id, raw string, users *authorized, now time.Time) (kubeconfig.Answer, error) {
	refuse := func(reason string) (kubeconfig.Answer, error) {
		k.refused++
		k.Log.Info("kubeconfig request refused", "request", id, "reason", reason)
		return kubeconfig.Answer{At: now, Reason: reason}, nil
	}
	req, err := kubeconfig.ParseRequest(raw)
	if err != nil {
		return refuse(err.Error())
	}
	if users.err != nil {
		if agent.IsRetryable(users.err) {
			return kubeconfig.Answer{}, users.err
		}
		return refuse("this master cannot read its authorized users: " + users.err.Error())
	}
	if !kubeconfig.Authorized(users.users, req.Name, req.Recipient) {
		for _, u := range users.users {
			if u.Name == req.Name {
				return refuse(fmt.Sprintf("recipient %s is not authorized for user %s on this master (%s)", kubeconfig.Short(req.Recipient), req.Name, vmcontext.KeyKubeconfigUsers))
			}
		}
		return refuse(fmt.Sprintf("user %s is not authorized on this master (%s in its CONTEXT)", req.Name, vmcontext.KeyKubeconfigUsers))
	}
	ca, err := k.CA()
	if err != nil {
		k.Log.Error("cannot sign kubeconfig certificates", "error", err)
		return refuse("this master cannot sign certificates: " + err.Error())
	}
	if err := credential.Grant(ctx, k.Client, req.Name, req.Role); err != nil {
		return kubeconfig.Answer{}, fmt.Errorf("request %s: %w", id, err)
	}
	cert, err := ca.Issue(req.Name, kubeconfig.Group(req.Name, req.Role), req.TTL, now, k.Rand)
	if err != nil {
		return refuse(err.Error())
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
	return agent.EraseKeys(ctx, k.OneGate, keys...)
}

// Report implements Reporter (counts only; no names or keys).
func (k *Kubeconfig) Report() any {
	r := map[string]any{"issued": k.issued, "refused": k.refused}
	if !k.lastIssued.IsZero() {
		r["last_issued"] = k.lastIssued.UTC().Format(time.RFC3339)
	}
	return r
}
