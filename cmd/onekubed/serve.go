package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/onekube/onekube/agent"
	"github.com/onekube/onekube/agent/credential"
	"github.com/onekube/onekube/agent/serve"
	"github.com/onekube/onekube/agent/state"
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
	// Ticks, hidden: tests shorten them (the defaults are the measured ones).
	tokensFast, tokensIdle, publishEvery, cleanupEvery time.Duration
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
	fl.DurationVar(&f.tokensFast, "tokens-fast", serve.DefaultTokensFast, "tokens loop tick while a VM waits")
	fl.DurationVar(&f.tokensIdle, "tokens-idle", serve.DefaultTokensIdle, "tokens loop tick while nobody waits (one GET /service each)")
	fl.DurationVar(&f.publishEvery, "publish-every", serve.DefaultPublishEvery, "publish loop tick (reads the API server only)")
	fl.DurationVar(&f.cleanupEvery, "cleanup-every", serve.DefaultCleanupEvery, "cleanup loop tick (one GET /service each)")
	for _, h := range []string{"tokens-fast", "tokens-idle", "publish-every", "cleanup-every"} {
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

	store := state.Store{Root: root}
	if done, err := store.Finished(); err != nil {
		return err
	} else if !done {
		return errors.New("bootstrap has not finished on this VM; serve starts after it")
	}
	st, err := store.Load()
	if err != nil {
		return err
	}
	kubeconfig := root.Path(f.kubeconfig)
	if ok, _ := root.Exists(f.kubeconfig); !ok {
		return fmt.Errorf("%s not found: serve runs on masters only", kubeconfig)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("reading %s: %w", kubeconfig, err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	src, err := agent.ContextSource(root, f.contextFile, os.Getenv)(ctx)
	if err != nil {
		return fmt.Errorf("reading the VM context: %w", err)
	}
	og, err := agent.NewOneGateClient(agent.OneGateConfig{Creds: src.Creds, CAFile: f.oneGateCAFile, CAPEM: src.OneGateCA})
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

	ttl := tokenTTL(ctx, og, src, log)

	shared := &serve.SharedService{OneGate: og, Clock: clock}
	board := serve.NewStatusBoard(root.Path(serve.StatusFile))
	r := &serve.Runner{
		Loops: []serve.Spec{
			{Loop: &serve.Presence{OneGate: og, Board: board}},
			{Loop: &serve.Kubeconfig{OneGate: og, VMID: src.Creds.VMID, Client: cs, Clock: clock,
				CA: func() (*credential.CA, error) { return credential.LoadCA(root) }, Log: log.With("loop", "kubeconfig")},
				ErrorDelay: 5 * time.Second},
			{Loop: cp, LeaderOnly: true, ErrorDelay: 10 * time.Second},
			{Loop: &serve.Publish{OneGate: og, Client: cs, Clock: clock, Every: f.publishEvery, Log: log.With("loop", "publish")}},
			{Loop: &serve.Tokens{OneGate: og, Client: cs, Clock: clock, TTL: ttl, Fast: f.tokensFast, Idle: f.tokensIdle, Service: shared, Log: log.With("loop", "tokens")}, LeaderOnly: true},
			{Loop: &serve.Cleanup{OneGate: og, Client: cs, Members: members, Clock: clock, Grace: f.cleanupGrace, Every: f.cleanupEvery, Service: shared, Log: log.With("loop", "cleanup")}, LeaderOnly: true},
		},
		Elector: &serve.LeaseElector{Client: cs, ID: identity, Log: log},
		Clock:   clock,
		Log:     log,
		Notify:  serve.Systemd{},
		Status:  board,
	}
	return r.Run(ctx)
}

// tokenTTL is ONEAPP_K8S_TOKEN_TTL as this master's context has it. A
// context serve cannot resolve (an older template with a lifetime now out
// of bounds) gets the default rather than no serve at all.
func tokenTTL(ctx context.Context, og agent.OneGate, src *agent.Source, log *slog.Logger) time.Duration {
	def, _ := vmcontext.ParseTokenTTL(vmcontext.DefaultTokenTTL)
	self, err := og.GetVM(ctx)
	if err != nil {
		log.Warn("reading this VM failed; join tokens get the default lifetime", "ttl", def, "error", err)
		return def
	}
	// Only the lifetime is read: the role, which names the node, is not
	// needed.
	cfg, err := src.Resolve(self, "")
	if err != nil {
		log.Warn("the context does not resolve; join tokens get the default lifetime", "ttl", def, "error", err)
		return def
	}
	return cfg.TokenTTL
}
