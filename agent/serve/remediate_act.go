package serve

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/drain"

	"github.com/onekube/onekube/context/onegate"
)

// VMActor is what remediation asks of OneGate beyond reading: VM actions
// on a sibling (POST /vms/:id/action, vm.action_by_id, allowed by
// default; reboot is restricted) and the role's cardinality
// (PUT /service/role/:role). Both need only this VM's token.
type VMActor interface {
	Action(ctx context.Context, vmID int, perform string, params map[string]string) error
	ScaleRole(ctx context.Context, role string, cardinality int) error
}

// The OneGate actions remediation performs, by onegate's names (OCA's:
// the -hard variants go out as perform "poweroff"/"terminate" with
// params true, onegate.ActionBody), sent with no params. Hard: the VM is
// unhealthy, and an ACPI request to a hung guest only waits for
// SHUTDOWN_TIMEOUT (reference day2-opennebula.md, terminate and
// terminate-hard).
const (
	actPowerOff  = onegate.ActionPoweroffHard
	actResume    = onegate.ActionResume
	actTerminate = onegate.ActionTerminateHard
)

// Drainer empties a Node before its VM goes, within timeout.
type Drainer func(ctx context.Context, cs kubernetes.Interface, node string, timeout time.Duration) error

// drainNode cordons the Node and evicts its pods through the eviction
// API, so PodDisruptionBudgets hold (k8s.io/kubectl/pkg/drain, as
// `kubectl drain --ignore-daemonsets --delete-emptydir-data --force`).
// Pods of a dead kubelet never finish terminating: those deleted more
// than a minute ago are not waited for. What is left at the deadline is
// left: the VM is broken, its pods do not run anyway.
func drainNode(ctx context.Context, cs kubernetes.Interface, node string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	h := &drain.Helper{
		Ctx:                             ctx,
		Client:                          cs,
		Force:                           true,
		IgnoreAllDaemonSets:             true,
		DeleteEmptyDirData:              true,
		GracePeriodSeconds:              -1,
		Timeout:                         timeout,
		SkipWaitForDeleteTimeoutSeconds: 60,
		Out:                             io.Discard,
		ErrOut:                          io.Discard,
	}
	n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading node %s: %w", node, err)
	}
	if err := drain.RunCordonOrUncordon(h, n, true); err != nil {
		return fmt.Errorf("cordoning node %s: %w", node, err)
	}
	if err := drain.RunNodeDrain(h, node); err != nil {
		return fmt.Errorf("draining node %s: %w", node, err)
	}
	return nil
}

// EventReason is the reason of every Event remediation records.
const EventReason = "OnekubeRemediation"

// eventSeq keeps two Events of one instant apart (names as the
// kubelet's: <object>.<hex nanoseconds>).
var eventSeq atomic.Int64

// nodeEvent records an Event on a Node (namespace default, where the
// kubelet and the node controllers put theirs). A failure is logged by
// the caller, never fatal: the status file has the same line.
func nodeEvent(ctx context.Context, cs kubernetes.Interface, node string, uid types.UID, now time.Time, warning bool, msg string) error {
	typ := corev1.EventTypeNormal
	if warning {
		typ = corev1.EventTypeWarning
	}
	t := metav1.NewTime(now)
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", node, now.UnixNano()+eventSeq.Add(1)), Namespace: metav1.NamespaceDefault},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: node, UID: uid, APIVersion: "v1"},
		Reason:         EventReason,
		Message:        bounded(msg, 1000),
		Type:           typ,
		Source:         corev1.EventSource{Component: "onekubed"},
		FirstTimestamp: t,
		LastTimestamp:  t,
		Count:          1,
	}
	_, err := cs.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, ev, metav1.CreateOptions{})
	return err
}

// deleteNode deletes the Node if it is still the one judged (its UID).
func deleteNode(ctx context.Context, cs kubernetes.Interface, n corev1.Node) error {
	uid := n.UID
	err := cs.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting node %s: %w", n.Name, err)
	}
	return nil
}
