package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/onekube/onekube/agent/etcdm"
	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/leave"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/cmd/internal/agentcli"
)

// leaveFlags are the flags of `onekubed leave`.
type leaveFlags struct {
	root, contextFile, kubeconfig string
	oneGateCAFile                 string
	mode                          string
	budget, uncordonFor           time.Duration
	uncordon                      bool
	log                           agentcli.LogFlags
}

func newLeaveCommand(stdout, stderr io.Writer) *cobra.Command {
	f := leaveFlags{}
	cmd := &cobra.Command{
		Use:   "leave",
		Short: "Take this node out of the cluster as its VM shuts down (onekube-node.service's ExecStop)",
		Long: "leave asks OneGate why the VM stops. Terminate (LCM_STATE SHUTDOWN): cordon, drain\n" +
			"honouring PodDisruptionBudgets, and delete the Node (a master keeps it for the acting\n" +
			"master, which removes its etcd member first). Poweroff or undeploy: cordon and drain\n" +
			"only; --uncordon at the next boot undoes it, waiting for the API server to answer\n" +
			"(--uncordon-for). A guest reboot: nothing. It uses the node's own credential and\n" +
			"fits KVM's 180 s shutdown timeout (--budget).\n\n" +
			"To remove one chosen node: `kubectl drain <node>`, then `onevm terminate <vmid>`;\n" +
			"OneFlow lowers the role's cardinality.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := f.log.Logger(stderr)
			if err != nil {
				return err
			}
			if err := runLeave(cmd.Context(), f, stdout, log); err != nil {
				return agentcli.RunFailure{Err: err}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.root, "root", "/", "directory every path the agent reads or writes is joined to")
	fl.StringVar(&f.contextFile, "context", "", "context.sh to read for the OneGate credentials; default: discover under --root")
	fl.StringVar(&f.oneGateCAFile, "onegate-ca-file", "", "PEM bundle of CAs for an https OneGate endpoint (as bootstrap's)")
	fl.StringVar(&f.kubeconfig, "kubeconfig", leave.KubeletConfig, "this node's own credential (under --root)")
	fl.StringVar(&f.mode, "mode", "auto", "auto (from OneGate's LCM_STATE), terminate, drain or none")
	fl.DurationVar(&f.budget, "budget", leave.DefaultBudget, "deadline of the whole leave (KVM destroys the VM 180 s after the ACPI shutdown)")
	fl.BoolVar(&f.uncordon, "uncordon", false, "undo a drain-only leave: lift the cordon leave made (onekube-uncordon.service, at boot)")
	fl.DurationVar(&f.uncordonFor, "uncordon-for", leave.DefaultUncordonFor, "with --uncordon: how long to retry until the API server answers (1 s doubling to 30 s)")
	f.log.Register(fl)
	return cmd
}

func runLeave(ctx context.Context, f leaveFlags, stdout io.Writer, log *slog.Logger) error {
	if ctx == nil {
		ctx = context.Background()
	}
	root := system.Root(f.root)
	st, done, err := finishedState(root)
	if err != nil {
		return err
	} else if !done {
		log.Info("bootstrap has not finished on this VM: nothing to leave")
		return nil
	}
	node, err := publishedNodeName(st)
	if err != nil {
		return err
	}
	cs, err := nodeClient(root, f.kubeconfig)
	if err != nil {
		return err
	}
	log = log.With("node", node)
	if f.uncordon {
		lifted, err := leave.UncordonAtBoot(ctx, cs, node, leave.Retry{For: f.uncordonFor, Log: log})
		if err != nil {
			return err
		}
		if lifted {
			log.Info("uncordoned: the VM is back")
		}
		return nil
	}
	mode, why, err := leaveMode(ctx, f, root)
	if err != nil {
		// Without OneGate the reason for the stop is unknown: do no harm
		// (a reboot must not drain); a terminate then ends like a
		// terminate-hard, which the acting master's clean-up handles.
		log.Warn("cannot tell why the VM stops; doing nothing", "error", err)
		return nil
	}
	log.Info("leaving", "mode", mode, "why", why)
	opts := leave.Options{Client: cs, Node: node, Mode: mode, Budget: f.budget, Log: log}
	if mode == leave.ModeTerminate {
		ec, peer, err := ownEtcd(root)
		switch {
		case err != nil:
			log.Warn("this master's etcd member cannot be removed", "error", err)
		case ec != nil:
			defer func() { _ = ec.Close() }()
			opts.Etcd, opts.EtcdPeer = ec, peer
		}
	}
	res, err := leave.Run(ctx, opts)
	if res.Left != "" {
		log.Warn("left to the acting master", "what", res.Left)
	}
	if res.EtcdKept != "" {
		log.Warn("etcd member kept", "why", res.EtcdKept)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "node %s: mode %s, cordoned %t, %d pods evicted, %d left in place, node deleted %t, etcd member removed %t\n",
		node, mode, res.Cordoned, res.Evicted, len(res.Skipped), res.NodeDeleted, res.EtcdRemoved)
	return nil
}

func leaveMode(ctx context.Context, f leaveFlags, root system.Root) (leave.Mode, string, error) {
	switch f.mode {
	case "terminate", "drain", "none":
		return leave.Mode(f.mode), "--mode", nil
	case "auto":
	default:
		return "", "", fmt.Errorf("--mode %q: want auto, terminate, drain or none", f.mode)
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	src, err := gate.LoadContext(ctx, string(root), f.contextFile, os.Getenv)
	if err != nil {
		return "", "", fmt.Errorf("reading the VM context: %w", err)
	}
	og, err := gate.NewClient(gate.Config{Creds: src.Creds, CAFile: f.oneGateCAFile, CAPEM: src.OneGateCA})
	if err != nil {
		return "", "", err
	}
	vm, err := og.GetVM(ctx)
	if err != nil {
		return "", "", err
	}
	mode, why := leave.ModeFor(vm)
	return mode, why, nil
}

// ownEtcd is this master's stacked etcd member, from the manifest kubeadm
// wrote on its disk: a client and the member's peer address (the host of
// its advertised client URL: kubeadm advertises both on the node's
// advertise address, phases/etcd GetEtcdPodSpec). nil without a manifest
// (a worker).
func ownEtcd(root system.Root) (*etcdm.Client, netip.Addr, error) {
	cfg, err := etcdm.FromManifest(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, netip.Addr{}, nil
	}
	if err != nil {
		return nil, netip.Addr{}, err
	}
	u, err := url.Parse(cfg.Endpoints[0])
	if err != nil {
		return nil, netip.Addr{}, err
	}
	peer, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		return nil, netip.Addr{}, fmt.Errorf("the etcd manifest advertises %s, not an address", cfg.Endpoints[0])
	}
	ec, err := etcdm.New(cfg)
	return ec, peer.Unmap(), err
}
