package agent

import (
	"context"
	"fmt"
)

// kubeadmInit runs kubeadm init. A previous attempt that left the node half
// initialized (the state says it started, or kubeadm's files exist) is
// undone with kubeadm reset -f first: kubeadm init refuses a dirty node.
func kubeadmInit(ctx context.Context, d Data) error {
	if err := resetIfDirty(ctx, d, PhaseKubeadmInit, AdminConfFile, KubeletConfFile); err != nil {
		return err
	}
	return runAttempt(ctx, d, PhaseKubeadmInit, func(ctx context.Context) error {
		return d.Kubeadm().Init(ctx, d.Root().Path(InitConfigFile), d.State().Token)
	})
}

// kubeadmJoin runs kubeadm join, after a reset if an earlier join failed or
// was interrupted.
func kubeadmJoin(ctx context.Context, d Data) error {
	if err := resetIfDirty(ctx, d, PhaseKubeadmJoin, KubeletConfFile); err != nil {
		return err
	}
	return runAttempt(ctx, d, PhaseKubeadmJoin, func(ctx context.Context) error {
		return d.Kubeadm().Join(ctx, d.Root().Path(JoinConfigFile), d.Master().Token)
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

// resetIfDirty runs kubeadm reset -f when an earlier attempt of name did not
// finish, or when any of files exists.
func resetIfDirty(ctx context.Context, d Data, name string, files ...string) error {
	dirty := d.State().WasAttempted(name)
	why := "an earlier attempt did not finish"
	for _, f := range files {
		ok, err := d.Root().Exists(f)
		if err != nil {
			return fmt.Errorf("checking %s: %w", f, err)
		}
		if ok && !dirty {
			dirty, why = true, f+" exists"
		}
	}
	if !dirty {
		return nil
	}
	d.Log().Warn("resetting the node before retrying", "command", name, "reason", why)
	ctx, cancel := context.WithTimeout(ctx, d.Settings().CommandTimeout)
	defer cancel()
	if err := d.Kubeadm().Reset(ctx); err != nil {
		return fmt.Errorf("resetting the node (%s): %w", why, err)
	}
	return nil
}

// controlPlaneJoin is what a second master-role VM does until HA lands.
func controlPlaneJoin(_ context.Context, d Data) error {
	n := d.Node()
	return fmt.Errorf("VM %d is in role %q but VM %d initializes the cluster: %w", n.VMID, n.RoleName, n.MasterIDs[0], ErrControlPlaneJoin)
}
