package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/credential"
	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/serve"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/cmd/internal/agentcli"
	vmcontext "github.com/onekube/onekube/context"
)

// serveFlags are the flags of `onekubed serve`.
type serveFlags struct {
	root, contextFile, kubeconfig string
	oneGateCAFile                 string
	log                           agentcli.LogFlags
	cleanupGrace                  time.Duration
	waitLimit                     time.Duration
	// certRenewBefore overrides ONEAPP_K8S_CERT_RENEW_BEFORE when set.
	certRenewBefore time.Duration
	// Ticks, hidden: tests shorten them (the defaults are the measured ones).
	tokensFast, tokensIdle, publishEvery, cleanupEvery time.Duration
	upgradeFast, upgradeIdle                           time.Duration
	controlPlaneIdle                                   time.Duration
	// csrGrace is how long the CSR approver leaves a CSR naming no
	// expected VM pending before denying it (hidden: the bed shortens it).
	csrGrace time.Duration
	// drainTimeout is how long a PodDisruptionBudget may hold an
	// upgrade's drain before the rollout stops.
	drainTimeout time.Duration
	// remediate bounds the remediation loop (docs/onekubed.md).
	remediate serve.RemediateConfig
	autoscale autoscaleFlags
}

// AdminKubeconfig is kubeadm's admin credential on a master; serve runs
// only where it exists.
const AdminKubeconfig = "/etc/kubernetes/admin.conf"

func newServeCommand(stderr io.Writer) *cobra.Command {
	f := serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Keep the cluster alive after bootstrap (masters; runs until stopped)",
		Long: "serve runs the loops of a living cluster on a master: join tokens on demand,\n" +
			"node clean-up after scale-down, kubeconfig requests. One master acts at a time\n" +
			"(the holder of the Lease kube-system/onekube-serve); the others stand by.\n" +
			"It starts only after bootstrap succeeded, and keeps nothing a restart loses.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := f.log.Logger(stderr)
			if err != nil {
				return err
			}
			if f.waitLimit <= 0 {
				return fmt.Errorf("--wait-limit must be positive, not %s", f.waitLimit)
			}
			if err := runServe(cmd.Context(), f, log); err != nil {
				return agentcli.RunFailure{Err: err}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.root, "root", "/", "directory every path the agent reads or writes is joined to")
	fl.StringVar(&f.contextFile, "context", "", "context.sh to read for the OneGate credentials; default: discover under --root")
	fl.StringVar(&f.oneGateCAFile, "onegate-ca-file", "", "PEM bundle of CAs for an https OneGate endpoint (as bootstrap's)")
	fl.StringVar(&f.kubeconfig, "kubeconfig", AdminKubeconfig, "admin kubeconfig (under --root)")
	fl.DurationVar(&f.cleanupGrace, "cleanup-grace", serve.DefaultCleanupGrace, "how long a Node's VM must be gone before the Node is deleted")
	fl.DurationVar(&f.waitLimit, "wait-limit", serve.DefaultWaitLimit, "how long a VM may wait to join before no join token is kept for it")
	fl.DurationVar(&f.certRenewBefore, "cert-renew-before", 0, "renew this master's certificates this long before they expire (default: "+vmcontext.KeyCertRenewBefore+" from the context, else 720h)")
	fl.DurationVar(&f.tokensFast, "tokens-fast", serve.DefaultTokensFast, "tokens loop tick while a VM waits")
	fl.DurationVar(&f.tokensIdle, "tokens-idle", serve.DefaultTokensIdle, "tokens loop tick while nobody waits (one GET /service each)")
	fl.DurationVar(&f.publishEvery, "publish-every", serve.DefaultPublishEvery, "publish loop tick (reads the API server only)")
	fl.DurationVar(&f.cleanupEvery, "cleanup-every", serve.DefaultCleanupEvery, "cleanup loop tick (one GET /service each)")
	fl.DurationVar(&f.upgradeFast, "upgrade-fast", serve.DefaultUpgradeFast, "upgrade loop tick while a rollout runs")
	fl.DurationVar(&f.controlPlaneIdle, "controlplane-idle", 0, "control-plane loop tick while no master is in turn (default 30s)")
	fl.DurationVar(&f.csrGrace, "csr-grace", serve.CSRGrace, "how long a node client CSR naming no VM the cluster expects stays pending before it is denied")
	fl.DurationVar(&f.upgradeIdle, "upgrade-idle", serve.DefaultUpgradeIdle, "upgrade loop tick while none runs (one GET of the plan each)")
	fl.DurationVar(&f.drainTimeout, "upgrade-drain-timeout", serve.DefaultDrainTimeout, "how long PodDisruptionBudgets may hold an upgrade's drain of a node before the rollout stops")
	d := serve.DefaultRemediateConfig
	fl.DurationVar(&f.remediate.UnhealthyAfter, "remediate-unhealthy-after", d.UnhealthyAfter, "how long a Node's Ready may be False or Unknown before it is remediated")
	fl.DurationVar(&f.remediate.StartupTimeout, "remediate-startup-timeout", d.StartupTimeout, "how long a running VM may have no Node before it is remediated")
	fl.IntVar(&f.remediate.MaxUnhealthyWorkersPct, "remediate-max-unhealthy-workers", d.MaxUnhealthyWorkersPct, "percent of the workers: more unhealthy than this stops worker remediation")
	fl.IntVar(&f.remediate.MaxUnhealthyMasters, "remediate-max-unhealthy-masters", d.MaxUnhealthyMasters, "more unhealthy masters than this stops master remediation")
	fl.DurationVar(&f.remediate.Every, "remediate-every", d.Every, "remediation tick (one GET /service?extended each)")
	fl.DurationVar(&f.remediate.ActionTimeout, "remediate-action-timeout", d.ActionTimeout, "how long a poweroff or terminate may take to show before remediation moves on or sends it again")
	fl.DurationVar(&f.remediate.RecoverWait, "remediate-recover-wait", d.RecoverWait, "how long a resumed VM has to become healthy before it is replaced")
	fl.DurationVar(&f.remediate.ScaleRetry, "remediate-scale-retry", d.ScaleRetry, "wait after OneFlow refused the cardinality restore")
	fl.DurationVar(&f.remediate.DrainTimeout, "remediate-drain-timeout", d.DrainTimeout, "bound of the drain before a replacement")
	fl.Float64Var(&f.autoscale.threshold, "autoscale-threshold", serve.DefaultAutoscaleThreshold, "autoscale: a worker whose requests are below this share of its allocatable is under-used")
	fl.DurationVar(&f.autoscale.unneededTime, "autoscale-unneeded-time", serve.DefaultAutoscaleUnneededTime, "autoscale: how long a worker stays removable before it is drained and terminated")
	fl.BoolVar(&f.autoscale.allowOldest, "autoscale-allow-oldest", false, "autoscale: scale-down may pick the worker role's oldest VM")
	fl.DurationVar(&f.autoscale.every, "autoscale-every", serve.DefaultAutoscaleEvery, "autoscale loop tick (one GET /service and a list of Nodes and Pods each)")
	for _, h := range []string{"tokens-fast", "tokens-idle", "publish-every", "cleanup-every", "remediate-every",
		"remediate-action-timeout", "remediate-recover-wait", "remediate-scale-retry", "remediate-drain-timeout",
		"upgrade-fast", "upgrade-idle", "autoscale-every", "controlplane-idle", "csr-grace"} {
		_ = fl.MarkHidden(h)
	}
	f.log.Register(fl)
	return cmd
}

func runServe(ctx context.Context, f serveFlags, log *slog.Logger) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := system.Root(f.root)

	st, done, err := finishedState(root)
	if err != nil {
		return err
	} else if !done {
		return errors.New("bootstrap has not finished on this VM; serve starts after it")
	}
	kubeconfig := root.Path(f.kubeconfig)
	if ok, _ := root.Exists(f.kubeconfig); !ok {
		return fmt.Errorf("%s not found: serve runs on masters only", kubeconfig)
	}
	// The certs loop renews admin.conf in place: the client follows it.
	rc, err := serve.ReloadingConfig(ctx, kubeconfig, serve.DefaultCredentialReload)
	if err != nil {
		return fmt.Errorf("reading %s: %w", kubeconfig, err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	src, err := gate.LoadContext(ctx, string(root), f.contextFile, os.Getenv)
	if err != nil {
		return fmt.Errorf("reading the VM context: %w", err)
	}
	og, err := gate.NewClient(gate.Config{Creds: src.Creds, CAFile: f.oneGateCAFile, CAPEM: src.OneGateCA})
	if err != nil {
		return fmt.Errorf("connecting to OneGate: %w", err)
	}
	log = log.With("vmid", src.Creds.VMID)
	identity := st.Published[vmcontext.KeyPubNodeName]
	if identity == "" {
		identity = fmt.Sprintf("vm-%d", src.Creds.VMID)
	}

	clock := agentcli.NewClock()
	cp, closeCP, err := controlPlaneLoop(ctx, f, root, og, cs, src.Creds.VMID, identity, log)
	if err != nil {
		return err
	}
	defer closeCP()
	cp.Clock = clock
	var members serve.MemberRemover
	if cp.Members != nil {
		members = serve.MembersByName{Etcd: cp.Members}
	}

	ttl := tokenTTL(src.Vars, log)

	shared := &serve.SharedService{OneGate: og, Clock: clock}
	board := serve.NewStatusBoard(root.Path(serve.StatusFile))
	loops := []serve.Spec{
		{Loop: &serve.Presence{OneGate: og, Board: board}},
		{Loop: &serve.Kubeconfig{OneGate: og, VMID: src.Creds.VMID, Client: cs, Clock: clock,
			CA: func() (*credential.CA, error) { return credential.LoadCA(root) }, Log: log.With("loop", "kubeconfig")},
			ErrorDelay: 5 * time.Second},
		{Loop: cp, LeaderOnly: true, ErrorDelay: 10 * time.Second},
		{Loop: &serve.Publish{OneGate: og, Client: cs, Clock: clock, Every: f.publishEvery, Log: log.With("loop", "publish"),
			Facts: serve.OwnJoinFacts(root, st.Published)}},
		{Loop: &serve.Certs{Root: root, Client: cs, OneGate: og, Clock: clock, Identity: identity,
			Renewer: serve.KubeadmRenewer{Kubeadm: kubeadm.Runner{Exec: system.OSExec{}}},
			Before:  certRenewBefore(f, src.Vars, log), Log: log.With("loop", "certs")}, ErrorDelay: 5 * time.Minute},
		{Loop: &serve.Tokens{OneGate: og, Client: cs, Clock: clock, TTL: ttl, WaitLimit: f.waitLimit, Fast: f.tokensFast, Idle: f.tokensIdle, Service: shared, Log: log.With("loop", "tokens")}, LeaderOnly: true},
		{Loop: &serve.CSRApprover{OneGate: og, Client: cs, Clock: clock, Prefix: src.Vars.Get(vmcontext.KeyNodeName), Grace: f.csrGrace, Log: log.With("loop", "csr-approver")}, LeaderOnly: true, ErrorDelay: 5 * time.Second},
		{Loop: &serve.Cleanup{OneGate: og, Client: cs, Members: members, Clock: clock, Grace: f.cleanupGrace, Every: f.cleanupEvery, Service: shared, Log: log.With("loop", "cleanup")}, LeaderOnly: true},
		{Loop: remediateLoop(f, og, cs, members, clock, src.Creds.VMID, cp.MasterRole, src.Vars, log), LeaderOnly: true},
		{Loop: &serve.Upgrade{Client: cs, OneGate: og, Etcd: cp.Members, Clock: clock, Log: log.With("loop", "upgrade"),
			Fast: f.upgradeFast, Idle: f.upgradeIdle,
			Drainer: serve.KubectlDrainer{Client: cs, Timeout: f.drainTimeout, Log: log.With("loop", "upgrade")}}, LeaderOnly: true},
	}
	if as := autoscaleLoop(src.Vars, f.autoscale, og, cs, clock, log.With("loop", "autoscale")); as != nil {
		loops = append(loops, serve.Spec{Loop: as, LeaderOnly: true})
	}
	r := &serve.Runner{
		Loops:   loops,
		Elector: &serve.LeaseElector{Client: cs, ID: identity, Log: log},
		Clock:   clock,
		Log:     log,
		Notify:  serve.Systemd{},
		Status:  board,
	}
	return r.Run(ctx)
}

// tokenTTL is ONEAPP_K8S_TOKEN_TTL as this master's context has it. A
// context serve cannot read (an older template with a lifetime now out of
// bounds) gets the default rather than no serve at all.
func tokenTTL(vars vmcontext.Vars, log *slog.Logger) time.Duration {
	def, _ := vmcontext.ParseTokenTTL(vmcontext.DefaultTokenTTL)
	s, err := vars.Settings()
	if err != nil || s.TokenTTL <= 0 {
		log.Warn("the context's settings do not read; join tokens get the default lifetime", "ttl", def, "error", err)
		return def
	}
	return s.TokenTTL
}

// certRenewBefore is the certs loop's threshold: the flag, else
// ONEAPP_K8S_CERT_RENEW_BEFORE from this master's context, else the
// default. A value that does not parse, or is not positive, gets the
// default and a warning rather than no renewal at all.
func certRenewBefore(f serveFlags, vars vmcontext.Vars, log *slog.Logger) time.Duration {
	if f.certRenewBefore > 0 {
		return f.certRenewBefore
	}
	s := strings.TrimSpace(vars.Get(vmcontext.KeyCertRenewBefore))
	if s == "" {
		return serve.DefaultCertRenewBefore
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		log.Warn("ignoring "+vmcontext.KeyCertRenewBefore+"; certificates renew at the default", "value", s, "default", serve.DefaultCertRenewBefore)
		return serve.DefaultCertRenewBefore
	}
	return d
}

var _ serve.VMActor = gate.Actor(nil)

// remediateLoop builds the remediation loop. ONEAPP_K8S_REMEDIATION comes
// from this master's CONTEXT, which only the owner sets; a value it cannot
// read leaves remediation off (judging and reporting only), as does a
// OneGate client without VM actions.
func remediateLoop(f serveFlags, og gate.OneGate, cs kubernetes.Interface, members serve.MemberRemover, clock system.Clock,
	self int, masterRole string, vars vmcontext.Vars, log *slog.Logger) *serve.Remediate {
	r := &serve.Remediate{OneGate: og, Client: cs, Members: members, Clock: clock, Self: self, MasterRole: masterRole,
		Config: f.remediate, Log: log.With("loop", "remediate")}
	raw := vars.Get(vmcontext.KeyRemediation)
	switch on, err := serve.ParseRemediationSwitch(raw); {
	case err != nil:
		r.Off = vmcontext.KeyRemediation + " unreadable (" + err.Error() + ")"
		log.Warn("remediation off: "+vmcontext.KeyRemediation+" is neither on nor off", "error", err)
	case !on:
		r.Off = vmcontext.KeyRemediation + "=off"
	}
	// gate.NewClient's client is a gate.Actor (agent/gate/actor.go):
	// remediation acts through this master's own token.
	if actor, ok := og.(gate.Actor); ok {
		r.Actor = actor
	} else if r.Off == "" {
		r.Off = "this OneGate client cannot act on VMs"
		log.Warn("remediation judges and reports only: the OneGate client has no VM actions")
	}
	return r
}
