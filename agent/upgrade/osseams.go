package upgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// KubePlan reads the plan with the node's kubelet credential and
// annotates the node's own Node (NodeRestriction lets a kubelet patch only
// its own Node).
type KubePlan struct {
	Client kubernetes.Interface
	Node   string
}

var _ PlanSource = KubePlan{}

// ReadPlan implements PlanSource. Forbidden reads as no plan: the acting
// master creates the Role that lets nodes read it, on its first tick.
func (k KubePlan) ReadPlan(ctx context.Context) (map[string]string, bool, error) {
	cm, err := k.Client.CoreV1().ConfigMaps(PlanNamespace).Get(ctx, PlanName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err), apierrors.IsForbidden(err):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("reading the upgrade plan: %w", err)
	}
	return cm.Data, true, nil
}

// Annotate implements PlanSource.
func (k KubePlan) Annotate(ctx context.Context, claim, errText string) error {
	ann := map[string]any{AnnotationStep: claim, AnnotationError: nil}
	if errText != "" {
		ann[AnnotationError] = errText
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
	_, err := k.Client.CoreV1().Nodes().Patch(ctx, k.Node, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// OneGateDisks attaches the bundle to this VM through OneGate's action on
// itself. Detaching needs the DISK_ID oned gave the attached disk, which
// GET /vm does not show (build_vm_hash keeps no DISK); DiskID supplies it
// when known, and without it the disk stays attached (harmless: the image
// is non-persistent and read-only mounted; the report says so).
type OneGateDisks struct {
	Actions Actioner
	VMID    int
	DiskID  func(ctx context.Context, imageID int) (int, error)
}

var _ Disks = OneGateDisks{}

// Attach implements Disks. OneGate's attachdisk passes params.disk_template
// to VirtualMachineJSON#disk_attach, which renders it with template_to_str:
// it must be the DISK vector as an object (src/oca/ruby/opennebula and
// src/sunstone/models/OpenNebulaJSON/VirtualMachineJSON.rb); the Actioner
// is asked to send it as the JSON object this string holds.
func (d OneGateDisks) Attach(ctx context.Context, imageID int) error {
	tmpl := fmt.Sprintf(`{"DISK":{"IMAGE_ID":"%d"}}`, imageID)
	return d.Actions.Action(ctx, d.VMID, "attachdisk", map[string]string{"disk_template": tmpl})
}

// ErrDiskIDUnknown is Detach's answer when no DiskID resolver is set.
var ErrDiskIDUnknown = errors.New("the bundle disk's DISK_ID is unknown to this VM; left attached")

// Detach implements Disks.
func (d OneGateDisks) Detach(ctx context.Context, imageID int) error {
	if d.DiskID == nil {
		return nil // see the type's comment; nothing reads the disk any more
	}
	id, err := d.DiskID(ctx, imageID)
	if err != nil {
		return err
	}
	return d.Actions.Action(ctx, d.VMID, "detachdisk", map[string]string{"disk_id": strconv.Itoa(id)})
}

// OSMounter finds the bundle with blkid and mounts it read-only.
type OSMounter struct{ Exec system.Exec }

var _ Mounter = OSMounter{}

const mountTimeout = time.Minute

func (m OSMounter) run(ctx context.Context, name string, args ...string) (system.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, mountTimeout)
	defer cancel()
	return m.Exec.Run(ctx, system.Cmd{Name: name, Args: args})
}

// Find implements Mounter. blkid exits 2 when no device has the label
// (util-linux blkid(8)).
func (m OSMounter) Find(ctx context.Context, label string) (string, bool, error) {
	res, err := m.run(ctx, "blkid", "-L", label)
	var ee *system.ExitError
	if errors.As(err, &ee) && ee.Code == 2 {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	dev := strings.TrimSpace(string(res.Stdout))
	if !strings.HasPrefix(dev, "/dev/") || strings.ContainsAny(dev, " \n") {
		return "", false, fmt.Errorf("blkid -L %s said %q", label, dev)
	}
	return dev, true, nil
}

// Mount implements Mounter.
func (m OSMounter) Mount(ctx context.Context, device, dir string) error {
	if _, err := m.run(ctx, "mountpoint", "-q", dir); err == nil {
		return nil
	}
	_, err := m.run(ctx, "mount", "-o", "ro,nodev,nosuid,noexec", device, dir)
	return err
}

// Unmount implements Mounter.
func (m OSMounter) Unmount(ctx context.Context, dir string) error {
	if _, err := m.run(ctx, "mountpoint", "-q", dir); err != nil {
		return nil
	}
	_, err := m.run(ctx, "umount", dir)
	return err
}

// OneGatePublisher writes the node's step to its own USER_TEMPLATE for
// `onekube-flow status` (display only: a sibling can rewrite it).
type OneGatePublisher struct{ OneGate gate.OneGate }

// Publish implements Publisher.
func (p OneGatePublisher) Publish(ctx context.Context, step, errText string) error {
	return p.OneGate.UpdateVM(ctx, onegate.KV{Key: vmcontext.KeyPubNodeUpgrade, Value: step}, onegate.KV{Key: vmcontext.KeyPubNodeUpgradeError, Value: errText})
}
