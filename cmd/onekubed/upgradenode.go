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

	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/agent/upgrade"
	"github.com/onekube/onekube/cmd/internal/agentcli"
)

// upgradeNodeFlags are the flags of `onekubed upgrade-node`.
type upgradeNodeFlags struct {
	root, contextFile, kubeconfig, oneGateCAFile string
	every                                        time.Duration
	log                                          agentcli.LogFlags
}

// The executor's files.
const (
	upgradeStateFile = "/var/lib/onekube/upgrade-node.json"
	upgradeMountDir  = "/run/onekube/bundle"
)

func newUpgradeNodeCommand(stderr io.Writer) *cobra.Command {
	f := upgradeNodeFlags{}
	cmd := &cobra.Command{
		Use:   "upgrade-node",
		Short: "Run this node's part of an in-place upgrade when granted (every node; runs until stopped)",
		Long: "upgrade-node polls the upgrade plan (the ConfigMap kube-system/onekube-upgrade) with\n" +
			"this node's kubelet credential. Once the acting master grants this node its step, it\n" +
			"attaches the bundle image through OneGate, verifies it against the plan, installs\n" +
			"kubeadm, imports the images, runs kubeadm upgrade apply or node, swaps the kubelet and\n" +
			"detaches the bundle, claiming each step on its Node. See docs/upgrades.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := f.log.Logger(stderr)
			if err != nil {
				return err
			}
			if err := runUpgradeNode(cmd.Context(), f, log); err != nil {
				return agentcli.RunFailure{Err: err}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.root, "root", "/", "directory every path is joined to")
	fl.StringVar(&f.contextFile, "context", "", "context.sh to read for the OneGate credentials; default: discover under --root")
	fl.StringVar(&f.oneGateCAFile, "onegate-ca-file", "", "PEM bundle of CAs for an https OneGate endpoint")
	fl.StringVar(&f.kubeconfig, "kubeconfig", kubeadm.KubeletConfFile, "this node's kubelet credential (under --root)")
	fl.DurationVar(&f.every, "every", 30*time.Second, "how often the plan is read")
	f.log.Register(fl)
	return cmd
}

func runUpgradeNode(ctx context.Context, f upgradeNodeFlags, log *slog.Logger) error {
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
		return errors.New("bootstrap has not finished on this VM; upgrade-node starts after it")
	}
	node, err := publishedNodeName(st)
	if err != nil {
		return err
	}
	cs, err := nodeClient(root, f.kubeconfig)
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
	// The real client's attachdisk/detachdisk (onegate.ActionBody), its
	// refusals classified (gate.ErrActionRefused, gate.ErrForbidden).
	actions, err := gate.NewActor(gate.Config{Creds: src.Creds, CAFile: f.oneGateCAFile, CAPEM: src.OneGateCA})
	if err != nil {
		return fmt.Errorf("connecting to OneGate: %w", err)
	}
	// The operator's preflight ignores, as bootstrap read them (a value it
	// refused stopped the bootstrap, so an error here is not expected).
	settings, err := src.Vars.Settings()
	if err != nil {
		return fmt.Errorf("reading the VM context: %w", err)
	}
	ex := &upgrade.Executor{
		NodeName: node,
		Plan:     upgrade.KubePlan{Client: cs, Node: node},
		Disks: upgrade.OneGateDisks{Actions: actions, VMID: src.Creds.VMID,
			DiskID: upgrade.ServiceDisks{OneGate: og, VMID: src.Creds.VMID}.DiskID},
		Mounter:         upgrade.OSMounter{Exec: system.OSExec{}},
		Exec:            system.OSExec{},
		Publish:         upgrade.OneGatePublisher{OneGate: og},
		Clock:           agentcli.NewClock(),
		StateFile:       root.Path(upgradeStateFile),
		MountDir:        root.Path(upgradeMountDir),
		BinDir:          root.Path("/usr/bin"),
		AttachWait:      2 * time.Minute,
		IgnorePreflight: settings.IgnorePreflight,
		Notice:          func(msg string) { log.Warn("upgrade done; the owner should know", "notice", msg) },
	}
	log = log.With("node", node)
	for {
		if err := ex.RunOnce(ctx); err != nil {
			log.Error("upgrade step failed; the rollout stops until the owner runs onekube-flow upgrade again", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(f.every):
		}
	}
}
