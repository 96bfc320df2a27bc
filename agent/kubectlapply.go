package agent

import (
	"context"
	"errors"
	"time"

	"github.com/onekube/onekube/agent/system"
)

// kubectlTimeout bounds one kubectl apply; the wait around it retries a
// fresh control plane's refusals for up to the command timeout.
const kubectlTimeout = 2 * time.Minute

// kubectlApply applies a manifest with the admin kubeconfig kubeadm init
// wrote: file, or stdin when file is "-". kubeadm init returns once the
// API server answers, but a fresh control plane may still refuse a
// request or two: a failing kubectl is retried for a while.
func kubectlApply(ctx context.Context, d Data, what, file string, stdin []byte) error {
	w := &waiter{
		what:    "applying " + what,
		timeout: d.Settings().CommandTimeout,
		initial: d.Settings().PollInterval,
		max:     d.Settings().MaxPollInterval,
		clock:   d.Clock(),
		log:     d.Log(),
	}
	return w.run(ctx, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, min(kubectlTimeout, d.Settings().CommandTimeout))
		defer cancel()
		_, err := d.Exec().Run(ctx, system.Cmd{
			Name:  "kubectl",
			Args:  []string{"--kubeconfig", d.Root().Path(AdminConfFile), "apply", "-f", file},
			Stdin: stdin,
		})
		var ee *system.ExitError
		if errors.As(err, &ee) {
			return Retryable(err)
		}
		return err
	})
}
