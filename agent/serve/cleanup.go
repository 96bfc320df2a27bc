package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// Cleanup deletes the Nodes of VMs that are gone (LeaderOnly). A VM is
// gone when the service no longer lists it (OneFlow drops a node once it
// is DONE: scale-down, `onevm terminate`, terminate-hard), or when it is
// listed but DONE (read with GET /vms/:id, only for NotReady Nodes). The
// moment a Node's VM was first seen gone is kept on the Node itself
// (annotation onekube.io/vm-gone-since), so a restart or a new acting
// master keeps counting; the Node is deleted once Grace has passed. A
// control-plane Node's etcd member is removed first, through Members; a
// refusal (quorum) or failure is published as ONEGATE_K8S_SERVE_ERROR on
// this master and the Node kept, so nothing happens silently. The Nodes
// waiting for deletion are published as ONEGATE_K8S_NODES_WITHOUT_VM, for
// `onekube-flow status`. A leaving
// master's `leave` drains but keeps its Node for this reason: the Node is
// how the member is found.
//
// It also keeps the grant that lets a node delete its own Node
// (noderbac.go), checked once per hour.
type Cleanup struct {
	OneGate gate.OneGate
	Client  kubernetes.Interface
	// Members removes etcd members; nil leaves control-plane Nodes alone
	// (reported as refused).
	Members MemberRemover
	Clock   system.Clock
	Log     *slog.Logger
	Grace   time.Duration
	Every   time.Duration
	// Service, when set, shares the tokens loop's GET /service: a read
	// younger than Every is reused.
	Service *SharedService

	grantAt    time.Time
	errMirror  keyMirror
	goneMirror keyMirror
	verdicts   map[int]verdict
	report     CleanupReport
}

// Defaults of the cleanup loop.
const (
	DefaultCleanupGrace = 5 * time.Minute
	DefaultCleanupEvery = 60 * time.Second
	grantEvery          = time.Hour
	// AnnotationVMGoneSince marks a Node whose VM is gone, with when that
	// was first seen (RFC 3339).
	AnnotationVMGoneSince = "onekube.io/vm-gone-since"
	labelControlPlane     = "node-role.kubernetes.io/control-plane"
)

var (
	_ Loop     = (*Cleanup)(nil)
	_ Reporter = (*Cleanup)(nil)
)

// Name implements Loop.
func (c *Cleanup) Name() string { return "cleanup" }

// Tick implements Loop.
func (c *Cleanup) Tick(ctx context.Context) (time.Duration, error) {
	c.defaults()
	now := c.Clock.Now()
	if now.Sub(c.grantAt) >= grantEvery {
		if err := EnsureNodeSelfRemoval(ctx, c.Client); err != nil {
			return 0, err
		}
		c.grantAt = now
	}
	svc, err := serviceOf(ctx, c.Service, c.OneGate, c.Every)
	if err != nil {
		return 0, err
	}
	nodes, err := nodesByVM(ctx, c.Client)
	if err != nil {
		return 0, err
	}
	rep := CleanupReport{NodesWithoutVM: map[string]time.Time{}, Refused: map[string]string{}}
	next := c.Every
	for _, id := range sortedKeys(nodes) {
		n := nodes[id]
		gone := c.vmGone(ctx, svc, id, n, now)
		since, marked := goneSince(n)
		switch {
		case !gone && marked:
			if err := c.annotate(ctx, n.Name, nil); err != nil {
				return 0, err
			}
			c.Log.Info("the VM of a node is back", "node", n.Name, "vm", id)
		case !gone:
		case !marked:
			if err := c.annotate(ctx, n.Name, ptr(now.UTC().Format(time.RFC3339))); err != nil {
				return 0, err
			}
			c.Log.Info("the VM of a node is gone; deleting the node after the grace period", "node", n.Name, "vm", id, "grace", c.Grace)
			rep.NodesWithoutVM[n.Name] = now.UTC()
			next = min(next, c.Grace)
		case now.Sub(since) < c.Grace:
			rep.NodesWithoutVM[n.Name] = since
			next = min(next, c.Grace-now.Sub(since))
		default:
			if why := c.remove(ctx, n); why != "" {
				rep.NodesWithoutVM[n.Name] = since
				rep.Refused[n.Name] = why
				continue
			}
			rep.Deleted = append(rep.Deleted, n.Name)
		}
	}
	if err := c.errMirror.set(ctx, c.OneGate, refusalText(rep.Refused)); err != nil {
		return 0, err
	}
	if err := c.goneMirror.set(ctx, c.OneGate, strings.Join(slices.Sorted(maps.Keys(rep.NodesWithoutVM)), " ")); err != nil {
		return 0, err
	}
	for id := range c.verdicts {
		if _, ok := nodes[id]; !ok {
			delete(c.verdicts, id)
		}
	}
	c.report = rep
	return max(next, time.Second), nil
}

// vmGone: not in the service, or in it but DONE (read only for a NotReady
// Node, at most every VerdictAge).
func (c *Cleanup) vmGone(ctx context.Context, svc serviceView, id int, n corev1.Node, now time.Time) bool {
	if _, ok := svc.Roles[id]; !ok {
		return true
	}
	if nodeReady(n) {
		return false
	}
	v, ok := c.verdicts[id]
	if !ok || now.Sub(v.at) >= DefaultVerdictAge {
		vm, err := c.OneGate.GetVMByID(ctx, id)
		if err != nil {
			c.Log.Warn("reading the VM of a NotReady node failed", "node", n.Name, "vm", id, "error", err)
			return false
		}
		v = verdict{at: now}
		if vm.State == onegate.StateDone {
			v.why = "DONE"
		}
		c.verdicts[id] = v
	}
	return v.why != ""
}

// remove deletes a gone VM's Node, its etcd member first for a master. It
// returns why it did not, "" once done.
func (c *Cleanup) remove(ctx context.Context, n corev1.Node) string {
	if _, master := n.Labels[labelControlPlane]; master {
		if c.Members == nil {
			return "control-plane node: no etcd membership helper here, its member is left in place"
		}
		if err := c.Members.RemoveMember(ctx, n.Name); err != nil {
			c.Log.Error("etcd member not removed; keeping the node", "node", n.Name, "error", err)
			return "etcd member not removed: " + err.Error()
		}
		c.Log.Info("etcd member removed", "node", n.Name)
	}
	uid := n.UID
	err := c.Client.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return "deleting the node: " + err.Error()
	}
	c.Log.Info("node of a gone VM deleted", "node", n.Name, "vm", n.Labels["onekube.io/vm-id"])
	return ""
}

// refusalText is one line OneGate can carry (no quotes, brackets,
// backslashes or line breaks; onegate.md §1.3), bounded.
func refusalText(refused map[string]string) string {
	if len(refused) == 0 {
		return ""
	}
	names := make([]string, 0, len(refused))
	for n := range refused {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + ": " + refused[n]
	}
	s := strings.NewReplacer(`"`, "'", "[", "(", "]", ")", `\`, "/", "\n", " ", "\r", " ", ",", ";").Replace(strings.Join(parts, " | "))
	if len(s) > 480 {
		s = s[:480] + "..."
	}
	return s
}

func (c *Cleanup) annotate(ctx context.Context, node string, value *string) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]*string{AnnotationVMGoneSince: value}}})
	if _, err := c.Client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("annotating node %s: %w", node, err)
	}
	return nil
}

func goneSince(n corev1.Node) (time.Time, bool) {
	raw, ok := n.Annotations[AnnotationVMGoneSince]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		return time.Time{}, false // rewritten by hand: start counting again
	}
	return t, true
}

// kubeletSilent: the node lifecycle controller set Ready to Unknown, as it
// does once the kubelet posted no status for node-monitor-grace-period
// (pkg/controller/nodelifecycle). A kubelet that reports NotReady, such as
// one waiting for its CNI, is alive.
func kubeletSilent(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionUnknown
		}
	}
	return false
}

func nodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (c *Cleanup) defaults() {
	if c.Clock == nil {
		c.Clock = system.RealClock{}
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Grace <= 0 {
		c.Grace = DefaultCleanupGrace
	}
	if c.Every <= 0 {
		c.Every = DefaultCleanupEvery
	}
	if c.verdicts == nil {
		c.verdicts = map[int]verdict{}
	}
	c.errMirror.key, c.goneMirror.key = vmcontext.KeyPubServeError, vmcontext.KeyPubNodesWithoutVM
}

func ptr[T any](v T) *T { return &v }

// Report implements Reporter.
func (c *Cleanup) Report() any { return c.report }
