package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/coreos/go-systemd/v22/daemon"
	"github.com/spf13/cobra"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/lb"
	"github.com/onekube/onekube/agent/lb/lbconfig"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/cmd/internal/agentcli"
	vmcontext "github.com/onekube/onekube/context"
)

// lbFlags are the flags of `onekubed lb`.
type lbFlags struct {
	root, contextFile, listen, config, kubeconfig, caFile string
	log                                                   agentcli.LogFlags
}

func newLBCommand(stderr io.Writer) *cobra.Command {
	f := lbFlags{}
	cmd := &cobra.Command{
		Use:   "lb",
		Short: "Balance the API servers on 127.0.0.1:6444 (every node; runs until stopped)",
		Long: "lb is the local TCP load balancer in front of every master's API server, the\n" +
			"cluster's controlPlaneEndpoint when ONEAPP_K8S_CONTROL_PLANE_EP is empty. Its\n" +
			"backends come from lb.json (seeded by bootstrap from OneGate), then from the API\n" +
			"servers' own list (the endpoints default/kubernetes), read with kubelet.conf.\n" +
			"A backend gets new connections while GET /readyz answers 200 (every 2 s, the\n" +
			"cluster CA pinned; a TCP connect until the CA exists); one that turns unready\n" +
			"has its connections closed.\n" +
			"With ONEAPP_K8S_CONTROL_PLANE_EP set, it exits at once: the user's endpoint is used.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := f.log.Logger(stderr)
			if err != nil {
				return err
			}
			if err := runLB(cmd.Context(), f, log); err != nil {
				return agentcli.RunFailure{Err: err}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.root, "root", "/", "directory every path is joined to")
	fl.StringVar(&f.contextFile, "context", "", "context.sh to read for ONEAPP_K8S_CONTROL_PLANE_EP; default: discover under --root")
	fl.StringVar(&f.listen, "listen", vmcontext.LocalBalancer, "address to balance on (the controlPlaneEndpoint)")
	fl.StringVar(&f.config, "config", lbconfig.ConfigFile, "backends file (under --root)")
	fl.StringVar(&f.kubeconfig, "kubeconfig", kubeadm.KubeletConfFile, "credential to read the endpoints default/kubernetes with (under --root)")
	fl.StringVar(&f.caFile, "ca-file", kubeadm.CACertFile, "cluster CA the readiness probe pins (under --root; until it exists the probe is a TCP connect)")
	f.log.Register(fl)
	return cmd
}

func runLB(ctx context.Context, f lbFlags, log *slog.Logger) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := system.Root(f.root)
	if ep := userEndpoint(ctx, f, log); ep != "" {
		log.Info("not needed: the cluster uses the endpoint the template names", "key", vmcontext.KeyControlPlaneEP, "endpoint", ep)
		// READY before a clean exit: the unit ends inactive, not failed.
		_, _ = daemon.SdNotify(false, daemon.SdNotifyReady)
		return nil
	}
	return lb.Run(ctx, lb.Options{
		Listen:     f.listen,
		ConfigFile: root.Path(f.config),
		Kubeconfig: root.Path(f.kubeconfig),
		CAFile:     root.Path(f.caFile),
		Log:        log,
		Ready:      func() { _, _ = daemon.SdNotify(false, daemon.SdNotifyReady) },
	})
}

// userEndpoint reads ONEAPP_K8S_CONTROL_PLANE_EP from the context. A
// context that cannot be read yet means balancing anyway: an idle
// balancer costs nothing, a missing one stops every kubeadm run.
func userEndpoint(ctx context.Context, f lbFlags, log *slog.Logger) string {
	opts := vmcontext.LoadOptions{Root: f.root}
	if f.contextFile != "" {
		abs, err := filepath.Abs(f.contextFile)
		if err != nil {
			return ""
		}
		opts.Root, opts.ContextFile = "/", abs
	}
	vc, err := vmcontext.Load(ctx, opts)
	if err != nil {
		log.Warn("reading the VM context failed; balancing anyway", "error", err)
		return ""
	}
	return strings.TrimSpace(vc.Vars.Get(vmcontext.KeyControlPlaneEP))
}
