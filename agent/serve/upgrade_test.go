package serve

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/onekube/onekube/agent/etcdm"
	"github.com/onekube/onekube/agent/kversion"
	"github.com/onekube/onekube/agent/system/systemtest"
	"github.com/onekube/onekube/agent/upgrade"
	vmcontext "github.com/onekube/onekube/context"
)

type fakeEtcd struct {
	members, healthy int
}

func (f *fakeEtcd) Members(context.Context) ([]etcdm.Member, error) {
	var out []etcdm.Member
	for i := 0; i < f.members; i++ {
		out = append(out, etcdm.Member{ID: uint64(i + 1), Healthy: i < f.healthy})
	}
	return out, nil
}

type fakeDrainer struct {
	log         []string
	blocked     map[string]bool
	uncordonErr error
	// during runs inside Drain: a crash of serve mid-drain sees the
	// cluster as it is then.
	during func(node string)
}

func (f *fakeDrainer) Drain(_ context.Context, n string) error {
	f.log = append(f.log, "drain "+n)
	if f.during != nil {
		f.during(n)
	}
	if f.blocked[n] {
		// As kubectl's drain words it: quotes, a comma, brackets.
		return errors.New(`error when evicting pods/"web-1" -n "default": Cannot evict pod as it would violate the pod's disruption budget, [global timeout reached: 30s]`)
	}
	return nil
}

func (f *fakeDrainer) Uncordon(_ context.Context, n string) error {
	if f.uncordonErr != nil {
		return f.uncordonErr
	}
	f.log = append(f.log, "uncordon "+n)
	return nil
}

func upgradeNode(name string, cp bool, ver string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}, Annotations: map[string]string{}},
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: ver},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	if cp {
		n.Labels[labelControlPlane] = ""
	}
	return n
}

type upgradeRig struct {
	u     *Upgrade
	cs    *fake.Clientset
	og    *fakeService
	etcd  *fakeEtcd
	drain *fakeDrainer
}

func newUpgradeRig(t *testing.T) *upgradeRig {
	cs := fake.NewClientset(
		upgradeNode("m1", true, "v1.36.3"), upgradeNode("m2", true, "v1.36.3"),
		upgradeNode("w1", false, "v1.36.3"), upgradeNode("w2", false, "v1.36.3"),
	)
	og := newFakeService(1)
	og.add("master", 1, nil)
	og.add("master", 2, nil)
	og.add("worker", 3, nil)
	og.add("worker", 4, nil)
	r := &upgradeRig{cs: cs, og: og, etcd: &fakeEtcd{2, 2}, drain: &fakeDrainer{blocked: map[string]bool{}}}
	r.u = &Upgrade{Client: cs, OneGate: og, Etcd: r.etcd, Drainer: r.drain, Clock: systemtest.NewClock(time.Unix(0, 0))}
	return r
}

func (r *upgradeRig) writePlan(t *testing.T) {
	p := upgrade.Plan{Target: mustVersion("v1.37.2"), BundleImage: 9, BundleSHA: strings.Repeat("c", 64), Attempt: 1}
	_, err := r.cs.CoreV1().ConfigMaps("kube-system").Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: upgrade.PlanName, Namespace: "kube-system"}, Data: p.Data()}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func (r *upgradeRig) plan(t *testing.T) map[string]string {
	cm, err := r.cs.CoreV1().ConfigMaps("kube-system").Get(context.Background(), upgrade.PlanName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm.Data
}

// finish plays a node's executor: it claims done and its kubelet reports
// the target.
func (r *upgradeRig) finish(t *testing.T, name string) {
	ctx := context.Background()
	n, _ := r.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	n.Annotations[upgrade.AnnotationStep] = "v1.37.2 done"
	n.Status.NodeInfo.KubeletVersion = "v1.37.2"
	if _, err := r.cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func mustVersion(s string) kversion.Version {
	v, err := kversion.ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

func TestUpgradeRollsOut(t *testing.T) {
	ctx := context.Background()
	r := newUpgradeRig(t)
	if next, err := r.u.Tick(ctx); err != nil || next != DefaultUpgradeIdle {
		t.Fatalf("Tick without a plan = %v, %v", next, err)
	}
	if _, err := r.cs.RbacV1().RoleBindings("kube-system").Get(ctx, upgradePlanReader, metav1.GetOptions{}); err != nil {
		t.Fatalf("no RoleBinding for the nodes: %v", err)
	}
	r.writePlan(t)
	steps := []struct {
		finish string
		grants string // grant keys expected after the tick
		drains string
	}{
		{"", "m1=apply", "drain m1"},
		{"", "m1=apply", "drain m1"}, // m1 in flight: nothing new
		{"m1", "m1=apply m2=node", "drain m1, uncordon m1, drain m2"},
		{"m2", "m1=apply m2=node w1=node", "drain m1, uncordon m1, drain m2, uncordon m2, drain w1"},
		{"w1", "m1=apply m2=node w1=node w2=node", "drain m1, uncordon m1, drain m2, uncordon m2, drain w1, uncordon w1, drain w2"},
		{"w2", "m1=apply m2=node w1=node w2=node", "drain m1, uncordon m1, drain m2, uncordon m2, drain w1, uncordon w1, drain w2, uncordon w2"},
	}
	for i, s := range steps {
		if s.finish != "" {
			r.finish(t, s.finish)
		}
		if _, err := r.u.Tick(ctx); err != nil {
			t.Fatalf("tick %d: %v", i, err)
		}
		data := r.plan(t)
		var grants []string
		for _, n := range []string{"m1", "m2", "w1", "w2"} {
			if m := data[upgrade.KeyGrantPrefix+n]; m != "" {
				grants = append(grants, n+"="+m)
			}
		}
		if got := strings.Join(grants, " "); got != s.grants {
			t.Fatalf("tick %d: grants %q, want %q", i, got, s.grants)
		}
		if got := strings.Join(r.drain.log, ", "); got != s.drains {
			t.Fatalf("tick %d: drains %q, want %q", i, got, s.drains)
		}
	}
	data := r.plan(t)
	if data[upgrade.KeyPhase] != upgrade.PhaseDone {
		t.Fatalf("not done: %v", data)
	}
	for k := range data {
		if strings.HasPrefix(k, upgrade.KeyCordonPrefix) {
			t.Fatalf("left a cordon mark: %s", k)
		}
	}
	if got := r.og.ut(1, vmcontext.KeyPubUpgrade); got != "v1.37.2 done" {
		t.Fatalf("published %q", got)
	}
}

func TestUpgradeRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		spoil func(r *upgradeRig)
		want  string
	}{
		"a VM powered off": {func(r *upgradeRig) {
			r.og.set(func(f *fakeService) { f.vms[3].State, f.vms[3].LCMState = 8, 0 })
		}, "(vm-state): VM 3 is not RUNNING"},
		"service in warning": {func(r *upgradeRig) {
			r.og.set(func(f *fakeService) { f.state = 4 })
		}, "(service-state)"},
		"etcd unhealthy":         {func(r *upgradeRig) { r.etcd.healthy = 1 }, "(etcd): 1 of 2 etcd members are healthy"},
		"drain blocked by a PDB": {func(r *upgradeRig) { r.drain.blocked["m1"] = true }, "(drain-blocked): draining node m1: error when evicting pods/"},
		"skipped minor": {func(r *upgradeRig) {
			n, _ := r.cs.CoreV1().Nodes().Get(context.Background(), "w2", metav1.GetOptions{})
			n.Status.NodeInfo.KubeletVersion = "v1.35.0"
			r.cs.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{})
		}, "(skipped-minor): node w2 runs v1.35.0"},
	} {
		t.Run(name, func(t *testing.T) {
			r := newUpgradeRig(t)
			r.writePlan(t)
			tc.spoil(r)
			_, err := r.u.Tick(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Tick = %v, want %q", err, tc.want)
			}
			data := r.plan(t)
			if !strings.Contains(data[upgrade.KeyStopped], tc.want) || len(upgrade.Grants(data)) != 0 {
				t.Fatalf("plan after a refusal: %v", data)
			}
			if got := r.og.ut(1, vmcontext.KeyPubUpgradeError); !strings.Contains(got, tc.want) {
				t.Fatalf("published error %q", got)
			}
			if _, ok := data[upgrade.KeyCordonPrefix+"m1"]; ok {
				t.Fatalf("m1 left cordoned: %v (%v)", data, r.drain.log)
			}
			// Stopped: the next tick does nothing until the owner reruns.
			n := len(r.drain.log)
			if _, err := r.u.Tick(context.Background()); err != nil || len(r.drain.log) != n {
				t.Fatalf("tick after the stop: %v, %v", err, r.drain.log)
			}
		})
	}
}

// Workers go --batch at a time, but one drain per tick, so that a tick of
// several PDB-bound drains never outlives the runner's tick bound.
func TestUpgradeBatchOneDrainPerTick(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(upgradeNode("m1", true, "v1.36.3"),
		upgradeNode("w1", false, "v1.36.3"), upgradeNode("w2", false, "v1.36.3"), upgradeNode("w3", false, "v1.36.3"), upgradeNode("w4", false, "v1.36.3"))
	og := newFakeService(1)
	for id := 1; id <= 5; id++ {
		og.add("all", id, nil)
	}
	r := &upgradeRig{cs: cs, og: og, etcd: &fakeEtcd{1, 1}, drain: &fakeDrainer{}}
	r.u = &Upgrade{Client: cs, OneGate: og, Etcd: r.etcd, Drainer: r.drain, Clock: systemtest.NewClock(time.Unix(0, 0))}
	r.writePlan(t)
	cm, _ := cs.CoreV1().ConfigMaps("kube-system").Get(ctx, upgrade.PlanName, metav1.GetOptions{})
	cm.Data[upgrade.KeyBatch] = "2"
	cs.CoreV1().ConfigMaps("kube-system").Update(ctx, cm, metav1.UpdateOptions{})
	r.u.Tick(ctx) // m1
	r.finish(t, "m1")
	for i, want := range []string{"w1", "w1 w2", "w1 w2"} {
		if _, err := r.u.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, n := range []string{"w1", "w2", "w3", "w4"} {
			if r.plan(t)[upgrade.KeyGrantPrefix+n] != "" {
				got = append(got, n)
			}
		}
		if strings.Join(got, " ") != want {
			t.Fatalf("tick %d: granted %v, want %s", i, got, want)
		}
	}
}

// An uncordon the API refuses is retried, not a reason to stop.
func TestUpgradeUncordonFailureRetries(t *testing.T) {
	ctx := context.Background()
	r := newUpgradeRig(t)
	r.writePlan(t)
	r.u.Tick(ctx)
	r.finish(t, "m1")
	r.drain.uncordonErr = errors.New("etcdserver: request timed out")
	if _, err := r.u.Tick(ctx); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("Tick = %v", err)
	}
	if data := r.plan(t); data[upgrade.KeyStopped] != "" || data[upgrade.KeyCordonPrefix+"m1"] != "true" {
		t.Fatalf("plan after a failed uncordon: %v", data)
	}
	r.drain.uncordonErr = nil
	if _, err := r.u.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if data := r.plan(t); data[upgrade.KeyCordonPrefix+"m1"] != "" || data[upgrade.KeyGrantPrefix+"m2"] != "node" {
		t.Fatalf("plan after the retry: %v", data)
	}
}

// TestUpgradeCordonRecordedBeforeDrain: serve killed mid-drain (the bed's
// TestUpgrade does it) leaves a cordoned Node; the plan must already say
// serve cordoned it, or a later term that stops before draining it again
// never lifts that cordon.
func TestUpgradeCordonRecordedBeforeDrain(t *testing.T) {
	ctx := context.Background()
	r := newUpgradeRig(t)
	r.writePlan(t)
	var seen []string
	r.drain.during = func(n string) {
		if r.plan(t)[upgrade.KeyCordonPrefix+n] != "true" {
			seen = append(seen, n)
		}
	}
	for i := 0; i < 2; i++ {
		if i == 1 {
			r.finish(t, "m1")
		}
		if _, err := r.u.Tick(ctx); err != nil {
			t.Fatalf("tick %d: %v", i, err)
		}
	}
	if len(r.drain.log) < 2 {
		t.Fatalf("drains %v, want m1 and m2", r.drain.log)
	}
	if len(seen) != 0 {
		t.Fatalf("nodes %v drained while the plan did not yet record their cordon", seen)
	}
	if d := r.plan(t); d[upgrade.KeyGrantPrefix+"m2"] != "node" || d[upgrade.KeyCordonPrefix+"m2"] != "true" {
		t.Fatalf("plan after the second drain: %v", d)
	}
}
