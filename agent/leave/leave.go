package leave

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/drain"
)

// Defaults.
const (
	// DefaultBudget fits KVM's SHUTDOWN_TIMEOUT of 180 s (kvmrc), after
	// which the VM is destroyed, with room left for the kubelet and
	// containerd to stop.
	DefaultBudget = 150 * time.Second
	// DefaultEvictRetry is the wait after a refused eviction (429: a
	// PodDisruptionBudget) before asking again.
	DefaultEvictRetry = 5 * time.Second
	// AnnotationCordoned marks a cordon leave made, so `leave --uncordon`
	// undoes only its own and never an operator's.
	AnnotationCordoned = "onekube.io/cordoned-by-leave"
	labelControlPlane  = "node-role.kubernetes.io/control-plane"
)

// Options of one leave.
type Options struct {
	// Client is this node's own credential (kubelet.conf).
	Client kubernetes.Interface
	Node   string
	Mode   Mode
	// Budget bounds the whole leave (DefaultBudget when zero).
	Budget     time.Duration
	EvictRetry time.Duration
	Log        *slog.Logger
	// Etcd, on a master (kubeadm's stacked etcd manifest is on its disk),
	// removes etcd members; EtcdPeer is this master's peer address.
	Etcd     EtcdRemover
	EtcdPeer netip.Addr
}

// Result says what a leave did.
type Result struct {
	Cordoned    bool
	Evicted     int
	Skipped     map[string]string // pod: why it stays (static, DaemonSet)
	NodeDeleted bool
	// Left says what is left to the acting master's clean-up, if anything.
	Left string
	// EtcdRemoved: this master's etcd member was removed. EtcdKept says
	// why it was not, when it should have been.
	EtcdRemoved bool
	EtcdKept    string
}

// Run takes the node out of the cluster as Mode says. A terminating
// master also removes its own etcd member (etcd.go), whatever became of
// the drain: its VM is going either way.
func Run(ctx context.Context, o Options) (Result, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	res, err := drainNode(ctx, o)
	if o.Mode == ModeTerminate && o.Etcd != nil {
		removeOwnMember(ctx, o, &res)
	}
	return res, err
}

// drainNode cordons, drains and (terminate, a worker) deletes the Node.
func drainNode(ctx context.Context, o Options) (Result, error) {
	var res Result
	if o.Mode == ModeNone {
		return res, nil
	}
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	if o.EvictRetry <= 0 {
		o.EvictRetry = DefaultEvictRetry
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Budget)
	defer cancel()
	cs := drainClient{o.Client}
	node, err := cs.CoreV1().Nodes().Get(ctx, o.Node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		res.Left = "no Node of this name: nothing to do"
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("reading node %s: %w", o.Node, err)
	}
	if res.Cordoned, err = cordon(ctx, cs, node); err != nil {
		return res, err
	}
	o.Log.Info("cordoned", "node", o.Node, "mode", o.Mode)

	list, err := cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + o.Node})
	if err != nil {
		return res, fmt.Errorf("listing the pods of node %s: %w", o.Node, err)
	}
	evict, skipped := podsToEvict(list.Items)
	res.Skipped = skipped
	deadline, _ := ctx.Deadline()
	h := &drain.Helper{
		Ctx:                  ctx,
		Client:               cs,
		GracePeriodSeconds:   -1, // each pod's own
		Timeout:              time.Until(deadline),
		EvictErrorRetryDelay: o.EvictRetry,
		Out:                  logWriter{o.Log, slog.LevelInfo},
		ErrOut:               logWriter{o.Log, slog.LevelWarn},
	}
	if err := h.DeleteOrEvictPods(evict); err != nil {
		res.Left = "pods not evicted within the budget: the Node stays cordoned; the acting master deletes it once the VM is gone"
		return res, fmt.Errorf("draining node %s: %w", o.Node, err)
	}
	res.Evicted = len(evict)
	o.Log.Info("drained", "node", o.Node, "evicted", res.Evicted, "skipped", len(skipped))

	switch {
	case o.Mode != ModeTerminate:
		return res, nil
	case hasLabel(node, labelControlPlane):
		// The Node is how the acting master finds the etcd member to remove.
		res.Left = "control-plane node: the acting master removes its etcd member, then the Node"
		return res, nil
	}
	uid := node.UID
	err = cs.CoreV1().Nodes().Delete(ctx, o.Node, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	switch {
	case err == nil, apierrors.IsNotFound(err):
		res.NodeDeleted = true
		o.Log.Info("node deleted", "node", o.Node)
	case apierrors.IsForbidden(err):
		// The grant serve keeps is missing (serve not running yet, or an
		// older master): the clean-up loop deletes the Node instead.
		res.Left = "this node may not delete its Node (" + err.Error() + "): the acting master deletes it after its grace period"
	default:
		return res, fmt.Errorf("deleting node %s: %w", o.Node, err)
	}
	return res, nil
}

// cordon marks the node unschedulable, noting that leave did it.
func cordon(ctx context.Context, cs kubernetes.Interface, node *corev1.Node) (bool, error) {
	if node.Spec.Unschedulable {
		return false, nil // an operator's cordon, or a previous leave's: keep its owner
	}
	patch, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{AnnotationCordoned: "true"}},
		"spec":     map[string]any{"unschedulable": true},
	})
	if _, err := cs.CoreV1().Nodes().Patch(ctx, node.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return false, fmt.Errorf("cordoning node %s: %w", node.Name, err)
	}
	return true, nil
}

// podsToEvict is drain's choice of pods, made without reading DaemonSets
// (which a node may not): static pods end with the VM and DaemonSet pods
// tolerate the cordon, so both stay; every other pod is evicted, emptyDir
// data and unmanaged pods included, since the VM is going away anyway.
func podsToEvict(all []corev1.Pod) ([]corev1.Pod, map[string]string) {
	var evict []corev1.Pod
	skipped := map[string]string{}
	for _, p := range all {
		key := p.Namespace + "/" + p.Name
		if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
			skipped[key] = "static pod"
			continue
		}
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.Kind == "DaemonSet" {
			skipped[key] = "DaemonSet pod"
			continue
		}
		evict = append(evict, p)
	}
	return evict, skipped
}

func hasLabel(n *corev1.Node, key string) bool {
	_, ok := n.Labels[key]
	return ok
}

// logWriter turns drain's progress lines into log records.
type logWriter struct {
	log   *slog.Logger
	level slog.Level
}

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Log(context.Background(), w.level, "drain", "msg", string(trimNL(p)))
	return len(p), nil
}

func trimNL(p []byte) []byte {
	for len(p) > 0 && (p[len(p)-1] == '\n' || p[len(p)-1] == '\r') {
		p = p[:len(p)-1]
	}
	return p
}

var _ io.Writer = logWriter{}
