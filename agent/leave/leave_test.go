package leave

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/serve"
	"github.com/onekube/onekube/agent/testbed/loopback"
)

type world struct {
	t     *testing.T
	admin kubernetes.Interface
	s     *loopback.Server
}

func (w world) node(name string) {
	w.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := w.admin.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

// pod creates a Running, Ready pod bound to node (no kubelet runs here, so
// the test reports its status, as a kubelet would); grace 0 lets an
// eviction delete it at once.
func (w world) pod(name, node string, labels, annotations map[string]string) {
	w.t.Helper()
	ctx := context.Background()
	zero := int64(0)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{NodeName: node, TerminationGracePeriodSeconds: &zero,
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
	}
	created, err := w.admin.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	created.Status.Phase = corev1.PodRunning
	created.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	if _, err := w.admin.CoreV1().Pods("default").UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

func (w world) nodeClient(name string) kubernetes.Interface {
	w.t.Helper()
	cfg, err := w.s.SignClient("system:node:"+name, "system:nodes")
	if err != nil {
		w.t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

func (w world) waitDefaultSA() {
	w.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := w.admin.CoreV1().ServiceAccounts("default").Get(context.Background(), "default", metav1.GetOptions{}); err == nil {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatal("no default ServiceAccount")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A terminated worker leaves with its own credential on the real API
// server: it cordons itself, evicts its pods through pkg/drain honouring a
// PodDisruptionBudget (a refused eviction comes back as 429 at once and is
// retried, not blocked in client-go for 1m40s), leaves its static pod, and
// deletes its own Node; the other node is untouched.
func TestLeaveDrainsHonouringPDBAndDeletesItsNode(t *testing.T) {
	s := loopback.Start(t, loopback.Options{ControllerManager: true})
	w := world{t: t, admin: s.Client(t), s: s}
	ctx := context.Background()
	w.waitDefaultSA()
	w.node("worker-1")
	w.node("worker-2")
	if err := serve.EnsureNodeSelfRemoval(ctx, w.admin); err != nil {
		t.Fatal(err)
	}
	web := map[string]string{"app": "web"}
	w.pod("web-a", "worker-1", web, nil)
	w.pod("web-b", "worker-1", web, nil)
	w.pod("kube-proxy-static", "worker-1", nil, map[string]string{corev1.MirrorPodAnnotationKey: "x"})
	w.pod("other", "worker-2", nil, nil)
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: web}}}
	if _, err := w.admin.PolicyV1().PodDisruptionBudgets("default").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Wait until the disruption controller allows one disruption.
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := w.admin.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "web", metav1.GetOptions{})
		if err == nil && got.Status.DisruptionsAllowed == 1 && got.Status.ObservedGeneration == got.Generation {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("PDB never allowed a disruption: %+v", got.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	node := w.nodeClient("worker-1")

	var logs logBuf
	log := slog.New(slog.NewTextHandler(&logs, nil))
	done := make(chan struct{})
	var res Result
	var err error
	start := time.Now()
	go func() {
		defer close(done)
		res, err = Run(ctx, Options{Client: node, Node: "worker-1", Mode: ModeTerminate, EvictRetry: 500 * time.Millisecond, Budget: 60 * time.Second, Log: log})
	}()
	// One pod goes at once; the other is refused (429) until a
	// replacement is Ready elsewhere, as a Deployment's would be.
	waitLog(t, &logs, "Cannot evict pod as it would violate the pod's disruption budget", 20*time.Second)
	refusedAt := time.Since(start)
	w.pod("web-c", "worker-2", web, nil)
	<-done
	if err != nil {
		t.Fatalf("leave: %v\n%s", err, logs.String())
	}
	if refusedAt > 10*time.Second {
		t.Errorf("the first refusal surfaced after %s: a 429 was retried inside client-go", refusedAt)
	}
	if res.Evicted != 2 || !res.Cordoned || !res.NodeDeleted || res.Skipped["default/kube-proxy-static"] != "static pod" {
		t.Errorf("result %+v", res)
	}
	if _, err := w.admin.CoreV1().Nodes().Get(ctx, "worker-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("worker-1 still exists: %v", err)
	}
	n2, err := w.admin.CoreV1().Nodes().Get(ctx, "worker-2", metav1.GetOptions{})
	if err != nil || n2.Spec.Unschedulable {
		t.Errorf("worker-2 was touched: %v %+v", err, n2.Spec)
	}
	for _, p := range []string{"web-c", "other"} {
		if _, err := w.admin.CoreV1().Pods("default").Get(ctx, p, metav1.GetOptions{}); err != nil {
			t.Errorf("pod %s on worker-2: %v", p, err)
		}
	}
	t.Logf("leave took %s (first PDB refusal after %s)", time.Since(start).Round(time.Millisecond), refusedAt.Round(time.Millisecond))
}

// A PDB that never allows the eviction: leave gives up at its budget,
// keeps the Node (cordoned) for the acting master's clean-up and says so.
func TestLeaveBudgetKeepsTheNodeWhenPDBBlocks(t *testing.T) {
	s := loopback.Start(t, loopback.Options{ControllerManager: true})
	w := world{t: t, admin: s.Client(t), s: s}
	ctx := context.Background()
	w.waitDefaultSA()
	w.node("worker-1")
	if err := serve.EnsureNodeSelfRemoval(ctx, w.admin); err != nil {
		t.Fatal(err)
	}
	w.pod("db-0", "worker-1", map[string]string{"app": "db"}, nil)
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}
	if _, err := w.admin.PolicyV1().PodDisruptionBudgets("default").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := Run(ctx, Options{Client: w.nodeClient("worker-1"), Node: "worker-1", Mode: ModeTerminate, EvictRetry: 500 * time.Millisecond, Budget: 4 * time.Second})
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "global timeout reached") {
		t.Fatalf("err = %v", err)
	}
	if took > 8*time.Second {
		t.Errorf("a 4 s budget took %s", took)
	}
	if res.NodeDeleted || !strings.Contains(res.Left, "acting master deletes it") {
		t.Errorf("result %+v", res)
	}
	n, err := w.admin.CoreV1().Nodes().Get(ctx, "worker-1", metav1.GetOptions{})
	if err != nil || !n.Spec.Unschedulable {
		t.Errorf("node: %v, unschedulable=%v", err, n != nil && n.Spec.Unschedulable)
	}
	if _, err := w.admin.CoreV1().Pods("default").Get(ctx, "db-0", metav1.GetOptions{}); err != nil {
		t.Errorf("the PDB-protected pod went: %v", err)
	}
}

// Poweroff drains but keeps the Node; the next boot's --uncordon lifts
// only the cordon leave made. A control-plane node keeps its Node on
// terminate (its etcd member is found through it).
func TestLeaveDrainOnlyAndUncordon(t *testing.T) {
	s := loopback.Start(t, loopback.Options{})
	w := world{t: t, admin: s.Client(t), s: s}
	ctx := context.Background()
	w.node("worker-1")
	w.node("worker-2")
	w.node("master-3")
	cp, _ := w.admin.CoreV1().Nodes().Get(ctx, "master-3", metav1.GetOptions{})
	cp.Labels = map[string]string{labelControlPlane: ""}
	if _, err := w.admin.CoreV1().Nodes().Update(ctx, cp, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"worker-1", "master-3"} {
		mode := ModeDrain
		if name == "master-3" {
			mode = ModeTerminate
		}
		res, err := Run(ctx, Options{Client: w.nodeClient(name), Node: name, Mode: mode})
		if err != nil || res.NodeDeleted || !res.Cordoned {
			t.Fatalf("%s: %+v %v", name, res, err)
		}
	}
	// An operator cordoned worker-2 by hand: leave neither claims nor lifts it.
	n2, _ := w.admin.CoreV1().Nodes().Get(ctx, "worker-2", metav1.GetOptions{})
	n2.Spec.Unschedulable = true
	if _, err := w.admin.CoreV1().Nodes().Update(ctx, n2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if res, err := Run(ctx, Options{Client: w.nodeClient("worker-2"), Node: "worker-2", Mode: ModeDrain}); err != nil || res.Cordoned {
		t.Fatalf("worker-2: %+v %v", res, err)
	}
	for name, want := range map[string]bool{"worker-1": true, "worker-2": false} {
		lifted, err := Uncordon(ctx, w.nodeClient(name), name)
		if err != nil || lifted != want {
			t.Errorf("uncordon %s: lifted=%v err=%v", name, lifted, err)
		}
		n, _ := w.admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if n.Spec.Unschedulable == want {
			t.Errorf("%s unschedulable=%v after uncordon", name, n.Spec.Unschedulable)
		}
	}
}

func waitLog(t *testing.T, l *logBuf, want string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !strings.Contains(l.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("never logged %q:\n%s", want, l.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
