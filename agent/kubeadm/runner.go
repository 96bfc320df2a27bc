package kubeadm

import (
	"context"
	"fmt"
	"strings"

	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
)

// Runner runs the kubeadm binary through the agent's Exec seam. Every method
// hands kubeadm a config file or fixed flags, never a secret on the command
// line. Its output is scrubbed as it is read (system.Cmd.Scrub: any
// certificate key or bootstrap token), and the secrets the caller passes are
// masked too in any output folded into an error, because kubeadm may echo
// config values back.
type Runner struct {
	Exec   system.Exec
	Binary string // "" means "kubeadm" found on PATH
}

func (r Runner) binary() string {
	if r.Binary == "" {
		return "kubeadm"
	}
	return r.Binary
}

func (r Runner) run(ctx context.Context, secrets []vmcontext.Secret, args ...string) (system.Result, error) {
	if r.Exec == nil {
		return system.Result{}, fmt.Errorf("running kubeadm %s: no Exec configured", args[0])
	}
	// The Exec error already names the redacted command line and kubeadm's
	// last words; wrapping it again would only repeat them. Scrub: kubeadm
	// may print a key or token the caller does not know (the skip flags
	// below are not on every command, and a key it generates is new).
	return r.Exec.Run(ctx, system.Cmd{Name: r.binary(), Args: args, Secrets: secrets, Scrub: true})
}

// Init runs `kubeadm init --config configPath --upload-certs
// --skip-token-print --skip-certificate-key-print`: the certificates go
// into the kubeadm-certs Secret for joining control planes, encrypted with
// the config's certificateKey. kubeadm prints that key ("[upload-certs]
// Using certificate key:", phases/init/uploadcerts.go) and the join
// commands with the token and key (phases/init/showjoincommand.go) unless
// told not to; "skip-*" flags may go with --config
// (apis/kubeadm/validation ValidateMixedArguments). secrets are the values
// inside the config (token, certificate key).
func (r Runner) Init(ctx context.Context, configPath string, secrets ...vmcontext.Secret) error {
	_, err := r.run(ctx, secrets, "init", "--config", configPath, "--upload-certs",
		"--skip-token-print", "--skip-certificate-key-print")
	return err
}

// UploadCerts runs `kubeadm init phase upload-certs --upload-certs --config
// configPath --skip-certificate-key-print` on a control plane: the
// certificates go into the kubeadm-certs Secret again, encrypted with the
// config's certificateKey, for 2 hours, and the key is not printed (the
// phase inherits that flag, phases/init/uploadcerts.go; it prints no
// token). The key comes in the config because `--certificate-key` cannot
// be combined with `--config`.
func (r Runner) UploadCerts(ctx context.Context, configPath string, secrets ...vmcontext.Secret) error {
	_, err := r.run(ctx, secrets, "init", "phase", "upload-certs", "--upload-certs", "--config", configPath,
		"--skip-certificate-key-print")
	return err
}

// Join runs `kubeadm join --config configPath`.
func (r Runner) Join(ctx context.Context, configPath string, secrets ...vmcontext.Secret) error {
	_, err := r.run(ctx, secrets, "join", "--config", configPath)
	return err
}

// Reset runs `kubeadm reset -f`, undoing a failed init or join so it can be
// retried (kubeadm's preflight refuses a node with leftovers).
func (r Runner) Reset(ctx context.Context) error {
	_, err := r.run(ctx, nil, "reset", "-f")
	return err
}

// Version runs `kubeadm version -o short` and returns its release, e.g.
// "v1.36.3", after checking it is one: an unstamped build prints
// "v0.0.0-master+$Format:%H$", which must not become a kubernetesVersion.
func (r Runner) Version(ctx context.Context) (string, error) {
	res, err := r.run(ctx, nil, "version", "-o", "short")
	if err != nil {
		return "", err
	}
	out := strings.TrimSpace(string(res.Stdout))
	if _, err := checkKubernetesVersion(out); err != nil {
		return "", fmt.Errorf("reading kubeadm version: %w", err)
	}
	if !strings.HasPrefix(out, "v") {
		out = "v" + out
	}
	return out, nil
}

// CertsRenewAll runs `kubeadm certs renew all`: every leaf certificate and
// kubeconfig of this master, signed again by the CA on disk, offline if the
// API server is down (cmd/kubeadm/app/cmd/certs.go falls back to the
// default configuration). Extra args (--cert-dir, --kubeconfig-dir, ...)
// serve tests with a root other than /.
func (r Runner) CertsRenewAll(ctx context.Context, args ...string) error {
	_, err := r.run(ctx, nil, append([]string{"certs", "renew", "all"}, args...)...)
	return err
}
