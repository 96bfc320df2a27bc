package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/etcdm"
	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/serve"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/cmd/internal/agentcli"
	vmcontext "github.com/onekube/onekube/context"
)

// controlPlaneLoop builds serve's control-plane loop: certificate keys for
// joining masters and their stale etcd members (docs/architecture.md §3).
// Without a stacked etcd manifest (an external etcd) it manages no members.
func controlPlaneLoop(ctx context.Context, f serveFlags, root system.Root, og gate.OneGate, cs kubernetes.Interface,
	self int, nodeName string, log *slog.Logger) (*serve.ControlPlane, func(), error) {
	opts := vmcontext.LoadOptions{Root: f.root}
	if f.contextFile != "" {
		abs, err := filepath.Abs(f.contextFile)
		if err != nil {
			return nil, nil, err
		}
		opts.Root, opts.ContextFile = "/", abs
	}
	vc, err := vmcontext.Load(ctx, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the VM context: %w", err)
	}
	settings, err := vc.Vars.Settings()
	if err != nil {
		return nil, nil, err
	}
	loop := &serve.ControlPlane{
		OneGate:    og,
		Client:     cs,
		Uploader:   serve.KubeadmUploader{Kubeadm: kubeadm.Runner{Exec: system.OSExec{}}, Root: root, NodeName: nodeName},
		Clock:      system.RealClock{},
		Self:       self,
		MasterRole: settings.MasterRole,
		InitKey:    serve.InitKeyFrom(root, kubeadm.InitConfigFile),
		Dial:       agentcli.Dial,
		Idle:       f.controlPlaneIdle,
	}
	closeFn := func() {}
	if ecfg, err := etcdm.FromManifest(root); err != nil {
		log.Warn("not managing etcd members", "error", err)
	} else if ec, err := etcdm.New(ecfg); err != nil {
		log.Warn("not managing etcd members", "error", err)
	} else {
		loop.Members = ec
		closeFn = func() { _ = ec.Close() }
	}
	return loop, closeFn, nil
}
