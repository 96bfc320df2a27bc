package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/onekube/onekube/agent"
	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/cmd/internal/agentcli"
	"github.com/onekube/onekube/cmd/internal/version"
)

// bootstrapFlags are the flags of `onekube-agent bootstrap`.
type bootstrapFlags struct {
	root, contextFile string
	oneGateCAFile     string
	newCluster        bool
	log               agentcli.LogFlags
	tun               agent.Tunables
}

func newBootstrapCommand(stderr io.Writer) *cobra.Command {
	f := bootstrapFlags{tun: agent.DefaultTunables()}
	cmd := &cobra.Command{
		Use:   "bootstrap",
		Short: "Initialize or join the cluster, then report READY (runs once at boot)",
		Long: "bootstrap does this VM's part of the cluster and exits 0 when it is done:\n" +
			"the first master initialized and published, or a worker joined; READY=YES reported.\n" +
			"After a success it does nothing. Progress is kept under <root>/var/lib/onekube.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := f.log.Logger(stderr)
			if err != nil {
				return err // usage
			}
			if err := f.tun.Validate(); err != nil {
				return err
			}
			return runBootstrap(cmd.Context(), f, log)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.contextFile, "context", "", "context.sh to read, as given (token from token.txt beside it, or ONEGATE_TOKEN/TOKENTXT in it); default: discover under --root")
	fl.StringVar(&f.root, "root", "/", "directory every path the agent reads or writes is joined to")
	fl.DurationVar(&f.tun.MasterTimeout, "master-timeout", agent.DefaultMasterTimeout, "how long a worker waits for the master to publish")
	fl.StringVar(&f.tun.CNIDir, "cni-dir", agent.DefaultCNIDir, "directory of <cni>.yaml manifests (under --root)")
	fl.DurationVar(&f.tun.CommandTimeout, "command-timeout", agent.DefaultCommandTimeout, "deadline of one kubeadm run (kubectl apply: at most 2m each)")
	fl.StringVar(&f.oneGateCAFile, "onegate-ca-file", "", "PEM CA bundle to trust for an https ONEGATE_ENDPOINT behind a private CA (also: ONEKUBE_ONEGATE_CA in the context)")
	fl.BoolVar(&f.newCluster, "new-cluster", false, "this master's earlier cluster is gone (VM recreated with a fresh disk): clear its published join data and initialize a new one")
	f.log.Register(fl)
	// Knobs for tests and demos; production keeps the defaults.
	fl.DurationVar(&f.tun.PollInterval, "poll-interval", agent.DefaultPollInterval, "first backoff interval")
	fl.DurationVar(&f.tun.MaxPollInterval, "max-poll-interval", agent.DefaultMaxPollInterval, "backoff interval cap")
	fl.DurationVar(&f.tun.OneGateTimeout, "onegate-timeout", agent.DefaultOneGateTimeout, "how long to ride through OneGate failures")
	fl.DurationVar(&f.tun.InitEstimate, "init-estimate", agent.DefaultInitEstimate, "how long a first master expects kubeadm init to take (published for waiting workers)")
	fl.DurationVar(&f.tun.ClosePoll, "close-poll", agent.DefaultClosePoll, "a waiting worker's poll period around the master's estimate")
	fl.DurationVar(&f.tun.StartSpread, "start-spread", agent.DefaultStartSpread, "window over which workers spread their first OneGate request")
	for _, h := range []string{"poll-interval", "max-poll-interval", "onegate-timeout", "init-estimate", "close-poll", "start-spread"} {
		_ = fl.MarkHidden(h)
	}
	return cmd
}

func runBootstrap(ctx context.Context, f bootstrapFlags, log *slog.Logger) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	root := system.Root(f.root)
	exec := system.OSExec{}
	log.Info("onekube-agent starting", "version", version.String(), "root", f.root)
	opts := agent.Options{Root: root, ContextFile: f.contextFile, OneGateCAFile: f.oneGateCAFile, NewCluster: f.newCluster, Tunables: f.tun}
	err := agent.Bootstrap(ctx, opts, agent.Deps{
		LoadSource: agent.ContextSource(root, f.contextFile, os.Getenv),
		NewOneGate: agent.NewOneGateClient,
		Kubeadm:    kubeadm.Runner{Exec: exec},
		Exec:       exec,
		Hostname:   system.HostnameFor(root),
		Clock:      agentcli.NewClock(),
		Listen:     agentcli.Listen,
		Notify:     agent.SystemdNotifier{Log: log},
		Log:        log,
	})
	if err != nil {
		return agentcli.RunFailure{Err: err}
	}
	return nil
}
