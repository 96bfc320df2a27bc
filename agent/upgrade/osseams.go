package upgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/safetext"
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
// itself, and detaches it by the DISK_ID oned gave it, which only the
// extended service document shows (build_vm_hash keeps no DISK).
//
// OneGate hands an action's params to oned as they are: attachdisk needs
// a template String ("DISK=[IMAGE_ID=118]") and detachdisk an Integer
// (onegate-server.rb perform_action → one.vm.attach / one.vm.detach;
// docs/upgrade-bundle.md). The Actioner gets them as the single entry of
// its params map ("disk_template", "disk_id"), which
// onegate.ActionBody sends bare.
type OneGateDisks struct {
	Actions Actioner
	VMID    int
	// DiskID finds the attached bundle's DISK_ID (ServiceDisks.DiskID);
	// nil leaves the disk attached (read-only, unmounted: harmless).
	DiskID func(ctx context.Context, imageID int) (int, error)
}

var _ Disks = OneGateDisks{}

// Attach implements Disks. Under a hardened onegate-server.conf
// (:action_by_id: false) OneGate refuses a VM's actions on itself too:
// POST /vms/:id/action is its only action route (onegate-server.rb). The
// error then names the owner's step; a node whose bundle the owner
// attached never gets here (the executor finds the label first).
func (d OneGateDisks) Attach(ctx context.Context, imageID int) error {
	err := d.Actions.Action(ctx, d.VMID, onegate.ActionAttachDisk, map[string]string{onegate.ParamDiskTemplate: fmt.Sprintf("DISK=[IMAGE_ID=%d]", imageID)})
	if actionForbidden(err) {
		return fmt.Errorf("%w: the owner attaches the bundle instead: onevm disk-attach %d --image %d (on every VM of the service), "+
			"then runs onekube-flow upgrade again; a node with the bundle attached skips this step (docs/upgrades.md §5b): %w",
			ErrSelfActionForbidden, d.VMID, imageID, err)
	}
	return err
}

// ErrSelfActionForbidden: OneGate refuses this VM's attachdisk or
// detachdisk on itself (onegate-server.conf :action_by_id: false, or the
// action in :restricted_actions:).
var ErrSelfActionForbidden = errors.New("OneGate forbids this VM's disk actions on itself (onegate-server.conf :action_by_id: false)")

// ErrLeftAttached: the upgrade is done but the bundle stays attached,
// read-only and unmounted, for the owner to detach.
var ErrLeftAttached = errors.New("the bundle is left attached")

// actionForbidden is OneGate's 403 on an action, classified by
// gate.NewActor or not.
func actionForbidden(err error) bool {
	var e *onegate.Error
	return errors.Is(err, gate.ErrForbidden) || errors.As(err, &e) && e.Status == http.StatusForbidden
}

// ErrNotAttached is DiskID's answer when no disk of the image is attached.
var ErrNotAttached = errors.New("no disk of this image is attached")

// Detach implements Disks; a disk already gone is success (a resumed run).
func (d OneGateDisks) Detach(ctx context.Context, imageID int) error {
	if d.DiskID == nil {
		return nil
	}
	id, err := d.DiskID(ctx, imageID)
	if errors.Is(err, ErrNotAttached) {
		return nil
	}
	if err != nil {
		return err
	}
	err = d.Actions.Action(ctx, d.VMID, onegate.ActionDetachDisk, map[string]string{onegate.ParamDiskID: strconv.Itoa(id)})
	if actionForbidden(err) {
		// The node is upgraded; only the owner can unplug the disk now.
		return fmt.Errorf("%w (%w): the owner detaches it: onevm disk-detach %d %d", ErrLeftAttached, ErrSelfActionForbidden, d.VMID, id)
	}
	return err
}

// ServiceDisks reads this VM's disks from the extended service document:
// TEMPLATE.DISK is oned's record, which no VM can rewrite.
type ServiceDisks struct {
	OneGate gate.OneGate
	VMID    int
}

// DiskID returns the DISK_ID of the image's disk on this VM (the newest,
// should it be attached twice).
func (s ServiceDisks) DiskID(ctx context.Context, imageID int) (int, error) {
	svc, err := s.OneGate.GetServiceExtended(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading this VM's disks: %w", err)
	}
	for _, r := range svc.Roles {
		for _, n := range r.Nodes {
			if n.VMID != s.VMID || n.VM == nil {
				continue
			}
			id := -1
			for _, d := range n.VM.Disks {
				if d.ImageID == imageID && d.ID > id {
					id = d.ID
				}
			}
			if id < 0 {
				return 0, ErrNotAttached
			}
			return id, nil
		}
	}
	return 0, fmt.Errorf("the service document does not list VM %d", s.VMID)
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

// Publish implements Publisher. OneGate stores no empty value, and no
// quote, comma, bracket or backslash (onegate.CheckValue), so a step
// without an error erases the error key, and an error's text (kubeadm's
// words) is made storable: sending them as they were lost every step's
// publication (seen in the bed).
func (p OneGatePublisher) Publish(ctx context.Context, step, errText string) error {
	if errText == "" {
		if err := p.OneGate.UpdateVM(ctx, onegate.KV{Key: vmcontext.KeyPubNodeUpgrade, Value: step}); err != nil {
			return err
		}
		return gate.EraseKeys(ctx, p.OneGate, vmcontext.KeyPubNodeUpgradeError)
	}
	return p.OneGate.UpdateVM(ctx, onegate.KV{Key: vmcontext.KeyPubNodeUpgrade, Value: step},
		onegate.KV{Key: vmcontext.KeyPubNodeUpgradeError, Value: storable(errText)})
}

// storable is s as a value OneGate stores as sent: escaped and bounded
// (safetext), the characters it refuses replaced by near ones.
func storable(s string) string {
	s = safetext.Value(strings.NewReplacer("\r\n", "; ", "\n", "; ", "\r", "; ").Replace(s))
	s = strings.NewReplacer(`"`, "'", ",", ";", "[", "(", "]", ")", `\`, "/").Replace(s)
	if s == "" {
		return "-"
	}
	return s
}
