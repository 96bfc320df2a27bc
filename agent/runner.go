package agent

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
)

// Phase is one named step of the boot.
type Phase struct {
	Name string
	Run  func(ctx context.Context, d Data) error
	// RunIf, when set, decides whether the phase runs at all.
	RunIf func(d Data) (bool, error)
	// Once marks a phase whose completion is persisted: a rerun after a
	// crash skips it (kubeadm init must not run twice). Phases without it
	// are cheap and rerun every time (discovery, hashing, publishing).
	Once bool
	// Quiet phases are quick local checks, not announced to OneGate (each
	// report is an update of the VM in oned); systemd and the log still
	// see them, and a failure still names them.
	Quiet bool
	// Lazy phases are announced only if they have to wait (the phase
	// calls Data.ReportWaiting): a worker whose master is already READY
	// goes straight to its join without an update of its own.
	Lazy bool
	// Estimate, when set, is how long from this phase's start until the
	// VM publishes its join data, announced with the phase as
	// ONEGATE_K8S_ETA so waiting workers poll around it (pace.go).
	Estimate func(t *Tunables) time.Duration
}

// waitArmer is the part of Data the Runner sets up for each phase: what
// Data.ReportWaiting announces (nil: nothing).
type waitArmer interface {
	armWaiting(announce func(context.Context))
}

// Runner executes phases in order. It owns everything around a phase:
// reporting it to OneGate and systemd, logging its start, end and
// duration, persisting completion, and naming it in errors.
type Runner struct {
	Report Reporter
	Notify Notifier
	Log    *slog.Logger
	Clock  system.Clock
	// Save persists the state after each phase.
	Save func() error
	// Redact masks secrets in error text before it is logged.
	Redact func(string) string
}

// Run executes phases against d. The first failure stops the run; the
// error names the phase.
func (r *Runner) Run(ctx context.Context, phases []Phase, d Data) error {
	st := d.State()
	for _, p := range phases {
		log := r.Log.With("phase", p.Name)
		if p.RunIf != nil {
			ok, err := p.RunIf(d)
			if err != nil {
				return fmt.Errorf("phase %s: %w", p.Name, err)
			}
			if !ok {
				log.Debug("phase skipped")
				continue
			}
		}
		if p.Once && st.Done(p.Name) {
			log.Info("phase already done, skipping")
			continue
		}
		st.Phase = p.Name
		if err := r.Save(); err != nil {
			return fmt.Errorf("phase %s: %w", p.Name, err)
		}
		var eta time.Time
		if p.Estimate != nil {
			eta = r.Clock.Now().Add(p.Estimate(d.Settings()))
		}
		if !p.Quiet && !p.Lazy || staleFailure(d) {
			// A rerun after a failure announces even its quiet phases
			// until one is out: readers (serve's tokens and CSR approver
			// among them) take PHASE=failed for an agent that waits for
			// nothing, and the new attempt would not be admitted.
			r.Report.Phase(ctx, p.Name, eta)
			if n := d.Node(); n != nil && n.Self != nil && n.Self.UserTemplate != nil {
				n.Self.UserTemplate[vmcontext.KeyPubPhase] = p.Name
			}
		}
		if a, ok := d.(waitArmer); ok {
			var announce func(context.Context)
			if p.Lazy && !p.Quiet {
				name := p.Name
				announce = func(ctx context.Context) { r.Report.Phase(ctx, name, time.Time{}) }
			}
			a.armWaiting(announce)
		}
		r.Notify.Status(p.Name)
		start := r.Clock.Now()
		log.Info("phase started")
		if err := p.Run(ctx, d); err != nil {
			log.Error("phase failed", "duration", r.Clock.Now().Sub(start).Round(time.Millisecond), "error", r.Redact(err.Error()))
			return fmt.Errorf("phase %s: %w", p.Name, err)
		}
		if p.Once {
			st.MarkDone(p.Name)
			if err := r.Save(); err != nil {
				return fmt.Errorf("phase %s: %w", p.Name, err)
			}
		}
		log.Info("phase done", "duration", r.Clock.Now().Sub(start).Round(time.Millisecond))
	}
	return nil
}

// staleFailure: this VM's user template, as discovery read it, still says
// PHASE=failed from an earlier run.
func staleFailure(d Data) bool {
	n := d.Node()
	return n != nil && n.Self != nil && strings.TrimSpace(n.Self.UserTemplate[vmcontext.KeyPubPhase]) == PhaseFailed
}
