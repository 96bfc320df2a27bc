// Package agent is onekube-agent's boot logic: an ordered list of named
// phases per kind of node (phases.go), run by a Runner that reports each
// phase to OneGate and systemd, persists progress under a root, and names the
// phase in errors. Side effects go through the seams in Deps.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/onekube/onekube/agent/safetext"
	"github.com/onekube/onekube/agent/state"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// Source is the VM context as the agent uses it.
type Source struct {
	Creds vmcontext.Credentials
	// OneGateCA is the CA bundle of a OneGate behind a private CA
	// (ONEKUBE_ONEGATE_CA), nil for none.
	OneGateCA []byte
	// Resolve returns the settings, the node's address and name, given this
	// VM as OneGate describes it and the role OneFlow's service document
	// lists it in. It runs inside the discover phase, so a bad template is
	// reported through OneGate.
	Resolve func(self *onegate.VM, role string) (Config, error)
	// Worker is set when the context names a role (ROLE_NAME) other than
	// the master role: such a VM spreads its first request (startspread.go).
	Worker bool
	// MasterHinted is set when the context names the master's VM
	// (ONEKUBE_MASTER_VM_ID): the worker will not read the service.
	MasterHinted bool
}

// Deps are the agent's seams to the outside world.
type Deps struct {
	// LoadSource reads the VM context (context.sh, one_env, environment).
	LoadSource func(ctx context.Context) (*Source, error)
	// NewOneGate connects to OneGate with this VM's credentials.
	NewOneGate func(OneGateConfig) (OneGate, error)
	Kubeadm    Kubeadm
	Exec       system.Exec
	// Hostname renames the machine (nil: system.HostnameFor the root).
	Hostname system.Hostname
	Clock    system.Clock
	// MasterClock reads a master's clock (nil: APIServerClock).
	MasterClock MasterClock
	// Listen opens a listener (nil: net.Listen).
	Listen func(network, addr string) (net.Listener, error)
	Notify Notifier
	Log    *slog.Logger
}

// reportTimeout bounds one best-effort report to OneGate.
const reportTimeout = 30 * time.Second

// Bootstrap does this VM's part of the cluster: it initializes and
// publishes (the first master) or waits and joins (a worker), then reports
// READY=YES. After a success it does nothing; after a crash it resumes
// without repeating a completed kubeadm command; it never resets or
// re-initializes a node it has no record of setting up (preflight.go).
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
	mclk := deps.MasterClock
	if mclk == nil {
		mclk = APIServerClock{}
	}
	lsn := deps.Listen
	if lsn == nil {
		lsn = net.Listen
	}
	host := deps.Hostname
	if host == nil {
		host = system.HostnameFor(opts.Root)
	}

	store := state.Store{Root: opts.Root}
	if done, err := store.Finished(); err != nil {
		return err
	} else if done {
		log.Info("bootstrap already done, nothing to do", "sentinel", state.SentinelFile)
		ictx, cancel := context.WithTimeout(ctx, reportTimeout)
		identityAtBoot(ictx, opts, deps, log)
		cancel()
		notify.Status(PhaseDone)
		return nil
	}
	// Before anything else, and never reported to OneGate: the agent that
	// holds the lock is the one reporting.
	unlock, err := store.Lock()
	if err != nil {
		return err
	}
	defer unlock()

	src, err := deps.LoadSource(ctx)
	if err != nil {
		return fmt.Errorf("reading the VM context: %w", err)
	}
	og, err := deps.NewOneGate(OneGateConfig{Creds: src.Creds, CAFile: opts.OneGateCAFile, CAPEM: src.OneGateCA})
	if err != nil {
		return fmt.Errorf("connecting to OneGate: %w", err)
	}
	// Before the first save: a state file, even a corrupt one, is this
	// disk's memory of an earlier run (preflight).
	hadState, err := opts.Root.Exists(state.StateFile)
	if err != nil {
		return fmt.Errorf("checking the state file: %w", err)
	}
	st, err := loadState(store, clock, log)
	if err != nil {
		return err
	}

	d := &bootData{st: st, tun: tun, og: og, kadm: deps.Kubeadm, exec: deps.Exec, root: opts.Root, clock: clock,
		mclk: mclk, lsn: lsn, host: host, self: src.Creds.VMID, newCluster: opts.NewCluster, freshDisk: !hadState}
	d.save = func() error {
		st.UpdatedAt = clock.Now().UTC()
		return store.Save(st)
	}
	// The secrets known now and those learned later (the token this master
	// generates, the one a worker reads), each with its parts: every log
	// line and report passes through it.
	redact := func(s string) string {
		return vmcontext.Redact(s, secretsOf(src.Creds.Token, st.Token, d.master.Token, d.master.CertificateKey)...)
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

	if src.Worker && !st.Done(PhaseKubeadmJoin) {
		if err := spreadStart(ctx, d, startWindow(tun.StartSpread, src.MasterHinted)); err != nil {
			return err
		}
	}
	err = r.Run(ctx, discoverPhases(src.Resolve), d)
	if err == nil && !d.node.Adopted {
		log.Info("node discovered", "vmid", d.node.VMID, "role", safetext.Value(d.node.RoleName), "kind", string(d.node.Kind),
			"node", d.cfg.NodeName, "address", d.cfg.Address.String(), "masters", idList(d.node.MasterIDs))
		err = r.Run(ctx, phasesFor(d.node.Kind), d)
	}
	if err != nil {
		return fail(ctx, r, d, redact, err)
	}
	if d.node.Adopted {
		// Nothing was run or published; the phase reports of this run
		// only need putting back, and the error of a run that refused
		// this disk before its published data vouched for it again.
		clearStaleError(ctx, d)
		r.Report.Phase(ctx, PhaseDone, time.Time{})
	}
	st.Phase = PhaseDone
	if err := d.save(); err != nil {
		return err
	}
	if err := store.Finish(clock.Now()); err != nil {
		return err
	}
	notify.Status(PhaseDone)
	log.Info("bootstrap done", "kind", string(d.node.Kind), "adopted", d.node.Adopted)
	// Masters and straight workers rename their VM after READY, off the
	// critical path: a straight worker's READY follows its share of the
	// start-up window, so these renames are as spread as its first
	// requests were (issue 14). A none deployment's workers did in
	// setHostname.
	if !d.node.IdentityChecked {
		checkIdentity(ctx, d)
	}
	return nil
}

// loadState reads the state; a file that does not parse is set aside (kept
// for the operator) and read as no record at all, which preflight treats
// with the same suspicion as a lost file.
func loadState(store state.Store, clock system.Clock, log *slog.Logger) (*state.State, error) {
	st, err := store.Load()
	if !errors.Is(err, state.ErrCorrupt) {
		return st, err
	}
	kept, aerr := store.SetAside(clock.Now())
	if aerr != nil {
		return nil, errors.Join(err, aerr)
	}
	log.Warn("the state file does not parse; set aside, continuing as if it were lost", "kept_as", kept, "error", err)
	return &state.State{}, nil
}

// fail records and reports a failed boot: the redacted error goes to the
// state, a short form with the tool's own reason first to OneGate
// (ONEGATE_K8S_PHASE=failed and ONEGATE_K8S_ERROR in one update) and to
// systemd. READY is never written here.
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
	brief := redact(briefError(err))
	r.Report.Failure(rctx, brief)
	r.Notify.Status(PhaseFailed + ": " + brief)
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
