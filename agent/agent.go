// Package agent is onekube-agent's boot logic: an ordered list of named
// phases per kind of node (phases.go), run by a Runner that reports each
// phase to OneGate and systemd, persists progress under a root, and names the
// phase in errors. Side effects go through the seams in Deps.
package agent

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/onekube/onekube/agent/state"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
)

// Source is the VM context as the agent uses it.
type Source struct {
	Creds vmcontext.Credentials
	// Resolve returns the settings and this VM's address. It runs inside
	// the discover phase, so a bad template is reported through OneGate.
	Resolve func() (Config, error)
}

// Deps are the agent's seams to the outside world.
type Deps struct {
	// LoadSource reads the VM context (context.sh, one_env, environment).
	LoadSource func(ctx context.Context) (*Source, error)
	// NewOneGate connects to OneGate with this VM's credentials.
	NewOneGate func(vmcontext.Credentials) (OneGate, error)
	Kubeadm    Kubeadm
	Exec       system.Exec
	Clock      system.Clock
	Notify     Notifier
	Log        *slog.Logger
}

// reportTimeout bounds one best-effort report to OneGate.
const reportTimeout = 30 * time.Second

// Bootstrap does this VM's part of the cluster: it initializes and
// publishes (the first master) or waits and joins (a worker), then reports
// READY=YES. After a success it does nothing; after a crash it resumes
// without repeating a completed kubeadm command.
func Bootstrap(ctx context.Context, opts Options, deps Deps) error {
	tun := opts.Tunables.withDefaults()
	if err := tun.Validate(); err != nil {
		return err
	}
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	notify := deps.Notify
	if notify == nil {
		notify = nopNotifier{}
	}
	clock := deps.Clock
	if clock == nil {
		clock = system.RealClock{}
	}

	store := state.Store{Root: opts.Root}
	if done, err := store.Finished(); err != nil {
		return err
	} else if done {
		log.Info("bootstrap already done, nothing to do", "sentinel", state.SentinelFile)
		notify.Status(PhaseDone)
		return nil
	}
	st, err := store.Load()
	if err != nil {
		return err
	}
	src, err := deps.LoadSource(ctx)
	if err != nil {
		return fmt.Errorf("reading the VM context: %w", err)
	}
	og, err := deps.NewOneGate(src.Creds)
	if err != nil {
		return fmt.Errorf("connecting to OneGate: %w", err)
	}

	d := &bootData{st: st, tun: tun, og: og, kadm: deps.Kubeadm, exec: deps.Exec, root: opts.Root, clock: clock}
	d.save = func() error {
		st.UpdatedAt = clock.Now().UTC()
		return store.Save(st)
	}
	// The secrets known now and those learned later (the token this master
	// generates, the one a worker reads): every log line passes through it.
	redact := func(s string) string {
		return vmcontext.Redact(s, src.Creds.Token, st.Token, d.master.Token)
	}
	log = newRedactingLogger(log, redact)
	d.log = log
	r := &Runner{
		Report: oneGateReporter{og: og, log: log, timeout: reportTimeout},
		Notify: notify,
		Log:    log,
		Clock:  clock,
		Save:   d.save,
		Redact: redact,
	}

	err = r.Run(ctx, discoverPhases(src.Resolve), d)
	if err == nil {
		log.Info("node discovered", "vmid", d.node.VMID, "role", d.node.RoleName, "kind", string(d.node.Kind), "masters", idList(d.node.MasterIDs))
		err = r.Run(ctx, phasesFor(d.node.Kind), d)
	}
	if err != nil {
		return fail(ctx, r, d, redact, err)
	}
	st.Phase = PhaseDone
	if err := d.save(); err != nil {
		return err
	}
	if err := store.Finish(clock.Now()); err != nil {
		return err
	}
	notify.Status(PhaseDone)
	log.Info("bootstrap done", "kind", string(d.node.Kind))
	return nil
}

// fail records and reports a failed boot: the redacted error goes to the
// state, to OneGate (ONEGATE_K8S_PHASE=failed and ONEGATE_K8S_ERROR in one
// update) and to systemd. READY is never written here.
func fail(ctx context.Context, r *Runner, d *bootData, redact func(string) string, err error) error {
	msg := redact(err.Error())
	d.st.LastError = msg
	if serr := d.save(); serr != nil {
		r.Log.Warn("saving state failed", "error", serr)
	}
	// Report even if the boot was cancelled (SIGTERM): the operator needs
	// the reason more than the agent needs to honour the cancel instantly.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reportTimeout)
	defer cancel()
	r.Report.Failure(rctx, msg)
	r.Notify.Status(PhaseFailed + ": " + msg)
	return &Failure{msg: msg, err: err}
}

// Failure is a failed boot. Its message is redacted; Unwrap keeps the
// cause for errors.Is.
type Failure struct {
	msg string
	err error
}

func (f *Failure) Error() string { return f.msg }
func (f *Failure) Unwrap() error { return f.err }
