package agent

import (
	"context"

	"github.com/onekube/onekube/agent/kubeadm"
)

// grantWorkerJoin gives the worker token group what a join needs
// (kubeadm.WorkerJoinRBAC). kubeadm init's token carries that group and
// the master publishes it right after this phase, before onekubed serve
// first creates the same grant: without it, a worker joining in those
// seconds gets 403 reading kubeadm-config. kubectl apply is idempotent, so
// a rerun after a crash repeats it harmlessly.
func grantWorkerJoin(ctx context.Context, d Data) error {
	return kubectlApply(ctx, d, "the worker join RBAC", "-", kubeadm.WorkerJoinRBAC)
}
