package serve

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/protocol"
)

// Tokens keeps one join token valid while some VM of the service waits to
// join, and none otherwise (LeaderOnly). A VM waits when oned runs it and
// no live Node stands for it (listVMNodes: by provider ID); what it
// publishes can only withhold the token (whyNotWaiting). The token's group
// gets only a worker join's grants (EnsureWorkerJoinRBAC).
// While one waits, the token living longest is replaced by a fresh one
// (TTL) once less than refreshBefore(TTL) is left; the token it replaces
// stays until it expires, since a worker may be in the middle of a join
// with it. Once nobody waits and OneFlow is creating no VMs (the service is
// neither DEPLOYING nor SCALING), every onekube token is retired: the
// publish loops stop handing it out and erase it from OneGate on every
// master, and after RetireGrace its Secret is deleted. The grace is what
// makes the erase safe: a worker that read the token a moment before still
// completes its join (discovery, then the kubelet's TLS bootstrap) instead
// of hanging in discovery on a token the cluster no longer knows. A VM that
// starts waiting during the grace gets the token back. The token `kubeadm init` made carries onekube's description, so
// it is adopted like any other.
//
// A VM waits for at most WaitLimit (waitClocks): past it, it counts as
// waiting no more, and neither does the service's growth, which a VM that
// never becomes READY prolongs forever (OneFlow keeps the service
// DEPLOYING or SCALING until every VM is).
//
// The waiting VMs are published as ONEGATE_K8S_WAITING and the given-up
// ones as ONEGATE_K8S_GIVEN_UP (on a change), for `onekube-flow status`.
//
// Cost on OneGate: one GET /service per tick, plus one GET /vms/:id per
// VM without a live Node every VerdictAge (every bootingVerdictAge while
// oned has not run it). Ticks are Fast while someone waits
// or the service grows, Idle otherwise.
type Tokens struct {
	OneGate gate.OneGate
	Client  kubernetes.Interface
	Clock   system.Clock
	Log     *slog.Logger
	// TTL is the lifetime of a minted token (ONEAPP_K8S_TOKEN_TTL).
	TTL        time.Duration
	Fast, Idle time.Duration
	// VerdictAge is how long a VM's GET /vms/:id is trusted.
	VerdictAge time.Duration
	// Service, when set, is the read of GET /service shared with cleanup.
	Service *SharedService
	// RetireGrace is how long a retired token's Secret outlives its
	// erasure from OneGate.
	RetireGrace time.Duration
	// WaitLimit is how long a VM may wait to join (DefaultWaitLimit).
	WaitLimit time.Duration
	// SilentGrace is how long a Node's kubelet must have been silent
	// (Ready=Unknown) before its VM may count as bootstrapping again
	// (DefaultSilentGrace).
	SilentGrace time.Duration

	rbacAt       time.Time // last EnsureWorkerJoinRBAC
	verdicts     map[int]verdict
	clocks       waitClocks
	growingSince time.Time // serve's first sight of the service growing
	waiting      []int
	givenUp      []int
	shown        keyMirror
	shownGivenUp keyMirror
	report       TokensReport
}

// Defaults of the tokens loop.
const (
	DefaultTokensFast = 5 * time.Second
	DefaultTokensIdle = 30 * time.Second
	DefaultVerdictAge = time.Minute
	// DefaultRetireGrace covers the publish loops' tick (3 s) plus a whole
	// join: kubeadm uses the token within about a minute of reading it.
	DefaultRetireGrace = 2 * time.Minute
	// DefaultSilentGrace comes on top of the node controller's own
	// node-monitor-grace-period (50 s) before it set Ready=Unknown: a
	// kubelet that restarts or blips is back well within it.
	DefaultSilentGrace = time.Minute
	// bootingVerdictAge is how often a VM oned has not run yet is read.
	bootingVerdictAge = 10 * time.Second
	// rbacEvery is how often the worker group's grant is repaired.
	rbacEvery = time.Minute
)

type verdict struct {
	why     string // "" waits
	started bool   // oned has run the VM (runStarted)
	at      time.Time
}

var (
	_ Loop       = (*Tokens)(nil)
	_ Reporter   = (*Tokens)(nil)
	_ TermScoped = (*Tokens)(nil)
)

// Name implements Loop.
func (t *Tokens) Name() string { return "tokens" }

// refreshBefore is how much life the handed-out token must have left:
// half its lifetime, and never less than twice the worker's margin, so a
// waiting worker always finds one it accepts.
func refreshBefore(ttl time.Duration) time.Duration {
	return max(ttl/2, 2*protocol.TokenSafetyMargin)
}

// Tick implements Loop.
func (t *Tokens) Tick(ctx context.Context) (time.Duration, error) {
	t.defaults()
	now := t.Clock.Now()
	if t.rbacAt.IsZero() || now.Sub(t.rbacAt) >= rbacEvery {
		// Before any token is handed out: a worker token's group has
		// no other grant (workerrbac.go). Repaired once a minute.
		if err := EnsureWorkerJoinRBAC(ctx, t.Client); err != nil {
			return 0, err
		}
		t.rbacAt = now
	}
	svc, err := serviceOf(ctx, t.Service, t.OneGate, 0)
	if err != nil {
		return 0, err
	}
	nodes, err := listVMNodes(ctx, t.Client)
	if err != nil {
		return 0, err
	}
	w := t.waiters(ctx, svc, nodes, now)
	waiting := w.waiting
	growing := t.growing(svc, now)
	toks, err := ownedTokens(ctx, t.Client)
	if err != nil {
		return 0, err
	}
	if !slices.Equal(waiting, t.waiting) {
		t.Log.Info("VMs waiting to join", "vms", waiting)
		t.waiting = waiting
	}
	if givenUp := w.givenUpIDs(); !slices.Equal(givenUp, t.givenUp) {
		if len(givenUp) > 0 {
			t.Log.Warn("VMs waited to join longer than the limit; no join token is kept for them", "vms", givenUp, "limit", t.WaitLimit)
		}
		t.givenUp = givenUp
	}
	if err := t.shown.set(ctx, t.OneGate, joinInts(waiting)); err != nil {
		return 0, err
	}
	if err := t.shownGivenUp.set(ctx, t.OneGate, joinInts(t.givenUp)); err != nil {
		return 0, err
	}
	var live []kubeadm.OwnedToken
	for _, tk := range toks {
		if !tk.Expires.IsZero() && !tk.Expires.After(now) {
			// tokencleaner deletes it too; not relying on it keeps this
			// loop's view of the cluster its own.
			if err := deleteToken(ctx, t.Client, tk.ID); err != nil {
				return 0, err
			}
			continue
		}
		live = append(live, tk)
	}
	next := t.Fast
	switch {
	case len(waiting) == 0 && !growing:
		next = t.Idle
		for _, tk := range live {
			switch {
			case tk.Retired.IsZero():
				if err := setRetired(ctx, t.Client, tk.ID, now); err != nil {
					return 0, err
				}
				t.Log.Info("nobody waits to join: join token retired", "delete_after", t.RetireGrace)
				next = min(next, t.RetireGrace)
			case now.Sub(tk.Retired) >= t.RetireGrace:
				if err := deleteToken(ctx, t.Client, tk.ID); err != nil {
					return 0, err
				}
				t.Log.Info("join token deleted", "retired_at", tk.Retired.UTC().Format(time.RFC3339))
			default:
				next = min(next, t.RetireGrace-now.Sub(tk.Retired))
			}
		}
		live = nil
	case len(waiting) > 0:
		// Someone waits again: retired tokens with life left serve again.
		for i, tk := range live {
			if !tk.Retired.IsZero() {
				if err := setRetired(ctx, t.Client, tk.ID, time.Time{}); err != nil {
					return 0, err
				}
				live[i].Retired = time.Time{}
			}
		}
		sortByExpiry(live)
		cur, ok := current(live, now)
		if !ok || cur.Expires.Sub(now) <= refreshBefore(t.TTL) {
			if cur, err = mintToken(ctx, t.Client, now.Add(t.TTL)); err != nil {
				return 0, err
			}
			live = append([]kubeadm.OwnedToken{cur}, live...)
			t.Log.Info("join token minted", "expires", cur.Expires.UTC().Format(time.RFC3339), "for_vms", waiting)
		}
		next = min(next, cur.Expires.Sub(now)-refreshBefore(t.TTL))
	}
	t.report = TokensReport{Waiting: waiting, WaitingSince: w.since, GivenUp: w.givenUp, WaitLimit: t.WaitLimit.String(),
		NotWaiting: w.notWaiting, Growing: growing, Tokens: len(live)}
	if cur, ok := current(live, now); ok {
		t.report.TokenExpires = cur.Expires.UTC()
	}
	return next, nil
}

// waitView is one tick's verdict on the VMs without a live Node.
type waitView struct {
	waiting    []int
	since      map[string]time.Time // of the waiting VMs whose clock runs
	givenUp    map[string]time.Time // past the limit: when they started waiting
	notWaiting map[string]string    // why the others wait for nothing
}

func (w waitView) givenUpIDs() []int {
	var ids []int
	for s := range w.givenUp {
		id, _ := strconv.Atoi(s)
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// waiters splits the VMs without a Node into those that wait, those that
// waited past the limit, and those that do not wait (with why), reading
// each VM at most every VerdictAge.
func (t *Tokens) waiters(ctx context.Context, svc serviceView, nodes vmNodes, now time.Time) waitView {
	w := waitView{since: map[string]time.Time{}, givenUp: map[string]time.Time{}, notWaiting: map[string]string{}}
	seen := map[int]bool{}
	for _, id := range sortedKeys(svc.Roles) {
		// A VM with a Node whose kubelet reports (Ready or not: a node
		// waits for its CNI NotReady) is a member. A Node whose kubelet
		// has been silent for longer than SilentGrace may be the leftover
		// of a VM bootstrapping again (kubeadm reset, then the agent
		// restarted; or a recreated disk): its VM is read like one
		// without a Node.
		if slices.ContainsFunc(nodes.claimed[id], func(n corev1.Node) bool { return !kubeletSilentFor(n, now, t.SilentGrace) }) {
			continue
		}
		seen[id] = true
		key := strconv.Itoa(id)
		v, ok := t.verdicts[id]
		age := t.VerdictAge
		if !v.started {
			// A VM oned has not run yet is read again soon: its
			// token is due the moment it runs.
			age = min(age, bootingVerdictAge)
		}
		if !ok || now.Sub(v.at) >= age {
			vm, err := t.OneGate.GetVMByID(ctx, id)
			if err != nil {
				// Unknown: it waits for nothing until read (a token
				// is minted only on oned's word that the VM runs);
				// read it again next tick.
				t.Log.Warn("reading a VM without a Node failed; not counting it as waiting", "vm", id, "error", err)
				v = verdict{why: "its VM could not be read from OneGate"}
			} else {
				v = verdict{why: whyNotWaiting(vm), started: runStarted(vm), at: now}
				t.verdicts[id] = v
			}
		}
		if v.why != "" {
			w.notWaiting[key] = v.why
			continue
		}
		since := t.clocks.observe(id, v.started, now)
		switch {
		case since.IsZero():
			w.waiting = append(w.waiting, id)
		case now.Sub(since) >= t.WaitLimit:
			w.givenUp[key] = since.UTC()
		default:
			w.waiting = append(w.waiting, id)
			w.since[key] = since.UTC()
		}
	}
	for id := range t.verdicts {
		if !seen[id] {
			delete(t.verdicts, id)
		}
	}
	t.clocks.keep(seen)
	for _, m := range []*map[string]time.Time{&w.since, &w.givenUp} {
		if len(*m) == 0 {
			*m = nil
		}
	}
	if len(w.notWaiting) == 0 {
		w.notWaiting = nil
	}
	return w
}

// growing: OneFlow is creating VMs, a new one may appear at any moment and
// the token is kept for it; but for no longer than WaitLimit, since a VM
// that never becomes READY keeps the service growing forever.
func (t *Tokens) growing(svc serviceView, now time.Time) bool {
	if !svc.growing() {
		t.growingSince = time.Time{}
		return false
	}
	if t.growingSince.IsZero() {
		t.growingSince = now
	}
	return now.Sub(t.growingSince) < t.WaitLimit
}

// NewTerm implements TermScoped: what was read of the VMs and of this
// master's published keys may have changed while another master acted.
// The wait clocks stay: a change of term must not give a VM a new limit.
func (t *Tokens) NewTerm() {
	t.verdicts = nil
	t.rbacAt = time.Time{}
	t.shown.known, t.shownGivenUp.known = false, false
}

func (t *Tokens) defaults() {
	if t.Clock == nil {
		t.Clock = system.RealClock{}
	}
	if t.Log == nil {
		t.Log = slog.New(slog.DiscardHandler)
	}
	if t.TTL <= 0 {
		t.TTL, _ = vmcontext.ParseTokenTTL(vmcontext.DefaultTokenTTL)
	}
	if t.Fast <= 0 {
		t.Fast = DefaultTokensFast
	}
	if t.Idle <= 0 {
		t.Idle = DefaultTokensIdle
	}
	if t.VerdictAge <= 0 {
		t.VerdictAge = DefaultVerdictAge
	}
	if t.RetireGrace <= 0 {
		t.RetireGrace = DefaultRetireGrace
	}
	if t.WaitLimit <= 0 {
		t.WaitLimit = DefaultWaitLimit
	}
	if t.SilentGrace <= 0 {
		t.SilentGrace = DefaultSilentGrace
	}
	if t.verdicts == nil {
		t.verdicts = map[int]verdict{}
	}
	t.shown.key = vmcontext.KeyPubWaiting
	t.shownGivenUp.key = vmcontext.KeyPubGivenUp
}

// Report implements Reporter.
func (t *Tokens) Report() any { return t.report }

func joinInts(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, " ")
}
