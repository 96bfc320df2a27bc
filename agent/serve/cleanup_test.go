package serve

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/system/systemtest"
	"github.com/onekube/onekube/agent/testbed/loopback"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// fakeMembers stands in for agent/etcdm: it refuses while refuse is set,
// as a quorum-safe remove does.
type fakeMembers struct {
	mu      sync.Mutex
	refuse  error
	removed []string
}

func (f *fakeMembers) RemoveMember(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refuse != nil {
		return f.refuse
	}
	f.removed = append(f.removed, name)
	return nil
}

func setReady(t *testing.T, cs kubernetes.Interface, name string, ready bool) {
	t.Helper()
	ctx := context.Background()
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func nodeExists(t *testing.T, cs kubernetes.Interface, name string) bool {
	t.Helper()
	_, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// Nodes of VMs that vanished (terminate-hard: gone from the service; a
// listed VM that is DONE) are deleted after the grace period and not
// before; a VM that comes back clears the mark; a master's etcd member is
// removed first, and a refusal at quorum is published loudly and keeps
// the Node until the removal succeeds.
func TestCleanupDeletesNodesOfGoneVMs(t *testing.T) {
	s := loopback.Start(t, loopback.Options{})
	cs := s.Client(t)
	clock := systemtest.NewClock(time.Now().Truncate(time.Second))
	og := newFakeService(10)
	og.add("master", 10, nil)
	og.add("master", 14, nil)
	for _, id := range []int{11, 12, 13, 15} {
		og.add("worker", id, nil)
	}
	for id, name := range map[int]string{10: "master-10", 14: "master-14", 11: "worker-11", 12: "worker-12", 13: "worker-13", 15: "worker-15"} {
		addNode(t, cs, name, id)
		setReady(t, cs, name, id != 13)
	}
	for _, m := range []string{"master-10", "master-14"} {
		n, _ := cs.CoreV1().Nodes().Get(context.Background(), m, metav1.GetOptions{})
		n.Labels[labelControlPlane] = ""
		if _, err := cs.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	members := &fakeMembers{refuse: errors.New(`removing member master-14 would leave 1 of 2 members healthy, below quorum 2`)}
	c := &Cleanup{OneGate: og, Client: cs, Clock: clock, Members: members}

	og.remove(12) // terminate-hard
	og.remove(14) // a master host died and the VM was terminated
	og.remove(15) // a glitch: it comes back
	og.set(func(f *fakeService) { f.vms[13].State = onegate.StateDone })
	next := mustTick(t, c)
	if next != DefaultCleanupEvery {
		t.Errorf("next tick in %s, want %s", next, DefaultCleanupEvery)
	}
	for _, n := range []string{"worker-12", "worker-13", "master-14", "worker-15"} {
		if _, ok := c.report.NodesWithoutVM[n]; !ok || !nodeExists(t, cs, n) {
			t.Errorf("%s: not reported, or deleted before the grace period", n)
		}
	}
	if got := og.ut(10, vmcontext.KeyPubNodesWithoutVM); got != "master-14 worker-12 worker-13 worker-15" {
		t.Errorf("ONEGATE_K8S_NODES_WITHOUT_VM = %q", got)
	}
	og.add("worker", 15, nil)
	clock.Advance(4 * time.Minute)
	mustTick(t, c)
	n15, _ := cs.CoreV1().Nodes().Get(context.Background(), "worker-15", metav1.GetOptions{})
	if _, marked := n15.Annotations[AnnotationVMGoneSince]; marked {
		t.Error("worker-15's VM came back but the mark stayed")
	}

	// A restarted serve (a new Cleanup) keeps counting from the mark.
	c = &Cleanup{OneGate: og, Client: cs, Clock: clock, Members: members}
	clock.Advance(time.Minute)
	mustTick(t, c)
	for _, n := range []string{"worker-12", "worker-13"} {
		if nodeExists(t, cs, n) {
			t.Errorf("%s outlived the grace period", n)
		}
	}
	for _, n := range []string{"master-10", "worker-11", "worker-15", "master-14"} {
		if !nodeExists(t, cs, n) {
			t.Errorf("%s was deleted", n)
		}
	}
	pub := og.ut(10, vmcontext.KeyPubServeError)
	if !strings.Contains(pub, "master-14: etcd member not removed: removing member master-14 would leave 1 of 2 members healthy") || strings.ContainsAny(pub, "\"[]\\\n") {
		t.Errorf("ONEGATE_K8S_SERVE_ERROR = %q", pub)
	}
	if !strings.Contains(c.report.Refused["master-14"], "quorum") {
		t.Errorf("report %+v", c.report)
	}

	// Quorum is back: the member goes, then the Node; the error is erased.
	members.mu.Lock()
	members.refuse = nil
	members.mu.Unlock()
	clock.Advance(time.Minute)
	mustTick(t, c)
	if nodeExists(t, cs, "master-14") || len(members.removed) != 1 || members.removed[0] != "master-14" {
		t.Errorf("master-14: node exists=%v, members removed %v", nodeExists(t, cs, "master-14"), members.removed)
	}
	if og.ut(10, vmcontext.KeyPubServeError) != "" {
		t.Error("the error stayed published after the removal succeeded")
	}
	if og.count("GetVMByID") != 3 { // worker-13 at 0, 4 and 5 min
		t.Errorf("%d GET /vms/:id: only NotReady nodes' VMs are read, at most once a minute", og.count("GetVMByID"))
	}
}

// The grant lets a node delete its own Node and NodeRestriction still
// refuses it any other.
func TestNodeSelfRemovalGrant(t *testing.T) {
	s := loopback.Start(t, loopback.Options{})
	cs := s.Client(t)
	ctx := context.Background()
	addNode(t, cs, "worker-1", 1)
	addNode(t, cs, "worker-2", 2)
	cfg, err := s.SignClient("system:node:worker-1", "system:nodes")
	if err != nil {
		t.Fatal(err)
	}
	node := kubernetes.NewForConfigOrDie(cfg)
	if err := node.CoreV1().Nodes().Delete(ctx, "worker-1", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("without the grant a node deleting itself got %v, want forbidden", err)
	}
	for range 2 { // idempotent
		if err := EnsureNodeSelfRemoval(ctx, cs); err != nil {
			t.Fatal(err)
		}
	}
	err = node.CoreV1().Nodes().Delete(ctx, "worker-2", metav1.DeleteOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `node "worker-1" is not allowed to modify node "worker-2"`) {
		t.Errorf("deleting another node: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err = node.CoreV1().Nodes().Delete(ctx, "worker-1", metav1.DeleteOptions{})
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond) // RBAC caches update within a moment
	}
	if err != nil {
		t.Fatalf("with the grant a node could not delete itself: %v", err)
	}
}
