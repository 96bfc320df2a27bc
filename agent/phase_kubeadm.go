package agent

import (
	"context"
	"fmt"
	"strings"
)

// kubeadmInit runs kubeadm init, after clearing what this VM published in
// an earlier bootstrap. A previous attempt of this agent that left the node
// half initialized is undone with kubeadm reset -f first (kubeadm init
// refuses a dirty node); kubeadm files without such a record are refused,
// never reset.
func kubeadmInit(ctx context.Context, d Data) error {
	if err := resetIfOwnAttempt(ctx, d, PhaseKubeadmInit); err != nil {
		return err
	}
	if err := clearPublished(ctx, d, joinKeys); err != nil {
		return err
	}
	return runAttempt(ctx, d, PhaseKubeadmInit, func(ctx context.Context) error {
		return d.Kubeadm().Init(ctx, d.Root().Path(InitConfigFile), d.State().Token)
	})
}

// kubeadmJoin runs kubeadm join, after a reset if an earlier join of this
// agent failed or was interrupted, and after clearing a READY=YES an
// earlier bootstrap (a previous disk) left. It rides out this VM's own
// stale Node (phase_stalenode.go).
func kubeadmJoin(ctx context.Context, d Data) error {
	if err := resetIfOwnAttempt(ctx, d, PhaseKubeadmJoin); err != nil {
		return err
	}
	keys := workerKeys
	if d.Node().Kind == KindControlPlane {
		keys = cpKeys[:len(cpKeys)-1] // the recipient stays until joined
	}
	if err := clearPublished(ctx, d, keys); err != nil {
		return err
	}
	return runAttempt(ctx, d, PhaseKubeadmJoin, func(ctx context.Context) error {
		return joinPastStaleNode(ctx, d)
	})
}

// runAttempt records that a command starts before running it, so a crash
// or failure midway is visible to the next run; the runner clears the mark
// when the phase completes.
func runAttempt(ctx context.Context, d Data, name string, run func(context.Context) error) error {
	d.State().MarkAttempt(name)
	if err := d.SaveState(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, d.Settings().CommandTimeout)
	defer cancel()
	return run(ctx)
}

// resetIfOwnAttempt runs kubeadm reset -f when this agent recorded an
// attempt of name that did not finish. kubeadm's files without that record
// stop the run: they may be a live node someone else set up.
func resetIfOwnAttempt(ctx context.Context, d Data, name string) error {
	files, err := presentFiles(d)
	if err != nil {
		return err
	}
	if !d.State().WasAttempted(name) {
		if len(files) > 0 {
			return fmt.Errorf("%w: %s but this agent never started %s here; to set it up again run `kubeadm reset -f` "+
				"and restart onekube-bootstrap.service. The agent never resets what it did not start",
				ErrRefused, filesSummary(files), strings.Replace(name, "-", " ", 1))
		}
		return nil
	}
	d.Log().Warn("resetting the node before retrying: an earlier attempt of this agent did not finish", "command", name)
	ctx, cancel := context.WithTimeout(ctx, d.Settings().CommandTimeout)
	defer cancel()
	if err := d.Kubeadm().Reset(ctx); err != nil {
		return fmt.Errorf("resetting the node after an unfinished %s: %w", name, err)
	}
	return nil
}
