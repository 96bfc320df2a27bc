package agent

import (
	"context"

	"github.com/onekube/onekube/agent/kubeadm"
	vmcontext "github.com/onekube/onekube/context"
)

// Files the agent writes or reads under its root (agent/kubeadm, which
// onekubed shares).
const (
	InitConfigFile    = kubeadm.InitConfigFile
	JoinConfigFile    = kubeadm.JoinConfigFile
	AdminConfFile     = kubeadm.AdminConfFile
	KubeletConfFile   = kubeadm.KubeletConfFile
	CACertFile        = kubeadm.CACertFile
	APIServerManifest = kubeadm.APIServerManifest
)

// Kubeadm runs the kubeadm binary, always with --config; kubeadm.Runner
// implements it. The paths are real (root-joined) paths, because kubeadm is
// a separate process. secrets are the values inside the config, masked in
// any output folded into an error.
type Kubeadm interface {
	Init(ctx context.Context, configPath string, secrets ...vmcontext.Secret) error
	Join(ctx context.Context, configPath string, secrets ...vmcontext.Secret) error
	// Reset runs `kubeadm reset -f`, undoing a partial init or join.
	Reset(ctx context.Context) error
	// Version returns `kubeadm version -o short`, e.g. "v1.37.2".
	Version(ctx context.Context) (string, error)
}
