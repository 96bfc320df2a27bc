package upgrade

import (
	"context"
)

// PlanSource is the node's view of the cluster: the plan ConfigMap (read
// with the node's own kubelet credential through the system:nodes Role),
// and its own Node's annotations, the only object it writes.
type PlanSource interface {
	// ReadPlan returns the plan's data; found is false when there is none.
	ReadPlan(ctx context.Context) (data map[string]string, found bool, err error)
	// Annotate sets this node's upgrade-step and upgrade-error annotations
	// (errText "" removes the error).
	Annotate(ctx context.Context, claim, errText string) error
}

// Actioner is OneGate's POST /vms/:id/action (gate.Actor, onegate.Client.Action);
// the executor only calls it on its own VM.
type Actioner interface {
	Action(ctx context.Context, vmID int, perform string, params map[string]string) error
}

// Disks attaches and detaches the bundle image to this VM.
type Disks interface {
	Attach(ctx context.Context, imageID int) error
	Detach(ctx context.Context, imageID int) error
}

// Mounter finds a filesystem by label and mounts it read-only.
type Mounter interface {
	// Find returns the block device holding a filesystem labelled label.
	Find(ctx context.Context, label string) (device string, found bool, err error)
	// Mount mounts device read-only (nodev, nosuid, noexec) at dir; a
	// device already mounted there is success.
	Mount(ctx context.Context, device, dir string) error
	// Unmount unmounts dir; nothing mounted there is success.
	Unmount(ctx context.Context, dir string) error
}

// Publisher shows the node's step in OneGate (its own USER_TEMPLATE) for
// `onekube-flow status`. Display only: nobody acts on it.
type Publisher interface {
	Publish(ctx context.Context, step, errText string) error
}
