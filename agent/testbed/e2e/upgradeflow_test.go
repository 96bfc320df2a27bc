//go:build realbed

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/onekube/onekube/agent/etcdm"
	"github.com/onekube/onekube/agent/testbed"
	"github.com/onekube/onekube/agent/upgrade"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegatesim"
	"github.com/onekube/onekube/flow"
)

// upgradeTopology is TestUpgrade's cluster, issue 21's: 3 masters (etcd
// keeps its quorum while one restarts; 2 would lose it) and 2 workers,
// which go one at a time (batch 1, at most half of them), so a drained
// worker's pod has a place to go while the other keeps serving.
// ONEKUBE_UPGRADE_TOPOLOGY=M+W overrides it (1+1 to iterate quickly; the
// PDB's placement below wants 2 workers).
func upgradeTopology(t *testing.T) (int, int) {
	m, w := 3, 2
	if v := os.Getenv("ONEKUBE_UPGRADE_TOPOLOGY"); v != "" {
		a, b, ok := strings.Cut(v, "+")
		var err1, err2 error
		m, err1 = strconv.Atoi(a)
		w, err2 = strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || m < 1 || w < 1 {
			t.Fatalf("ONEKUBE_UPGRADE_TOPOLOGY=%q: want M+W", v)
		}
	}
	return m, w
}

// TestUpgrade is issue 21's in-place upgrade end to end: a service at
// 1.36.3 bootstrapped by the real agent, a Deployment under a
// PodDisruptionBudget, a client asking /readyz every 200 ms through a
// worker's local balancer; the bundle of the bed's 1.37.2 registered as an
// image; the real `onekube-flow upgrade SERVICE --to v1.37.2 --bundle ID`
// from the user's machine, then `onekube-flow status --wait` until done.
// The acting master's serve drains and grants, each node's onekubed
// upgrade-node attaches the bundle through OneGate, mounts, checks,
// installs, imports, runs kubeadm, swaps its kubelet and detaches.
// Asserted: every Node at 1.37.2, every etcd member healthy, the PDB never
// below its minimum, no bundle left attached; measured: the API error
// windows, each node's time and the whole.
func TestUpgrade(t *testing.T) {
	t.Parallel() // mostly waiting: paired with another bed test (make e2e-real, docs/testbed.md)
	from, err := bins.At(upgradeFrom)
	if err != nil && bins.Agent != "" {
		t.Fatalf("%v (make testbed builds %s too)", err, upgradeFrom)
	}
	b := newBedWith(t, from)
	to := bins
	nm, nw := upgradeTopology(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	step := func(format string, args ...any) {
		t.Logf("[%5.1fs] %s", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}

	img := filepath.Join(t.TempDir(), "onekube-bundle-"+to.Version+".img")
	type built struct {
		sum string
		err error
	}
	bundle := make(chan built, 1)
	go func() {
		sum, err := testbed.BuildBundle(ctx, to, img)
		bundle <- built{sum, err}
	}()

	s := startServiceWith(t, b, testbed.ServiceOptions{Masters: nm, Workers: nw, CNIManifest: flannelManifest, AgentArgs: agentArgs,
		Upgrade: true, ServeArgs: []string{"--upgrade-fast", "2s", "--upgrade-idle", "2s", "--upgrade-drain-timeout", "30s"}})
	for _, r := range waitAgents(t, s, nm+nw) {
		if r.Code != 0 || r.Err != nil {
			t.Fatalf("VM %d: bootstrap exited %d (%v):\n%s", r.VM.ID, r.Code, r.Err, lastLines(r.Output(), 20))
		}
	}
	masters, workers := s.Sim.RoleVMs(s.ID, flow.RoleMaster), s.Sim.RoleVMs(s.ID, flow.RoleWorker)
	m0 := s.VM(masters[0].ID)
	admin := adminClient(t, b, m0)
	var names []string
	waitUntil(t, 3*time.Minute, "every Node Ready at "+from.Version, func() bool {
		nodes, err := admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || len(nodes.Items) != nm+nw {
			return false
		}
		names = names[:0]
		for i := range nodes.Items {
			n := &nodes.Items[i]
			if !ready(n) || n.Status.NodeInfo.KubeletVersion != from.Version {
				return false
			}
			names = append(names, n.Name)
		}
		return true
	})
	sort.Strings(names)
	step("service %d at %s: %d masters, %d workers", s.ID, from.Version, nm, nw)

	// A Deployment under a PDB. Its 2 pods spread one per node (required
	// anti-affinity), prefer workers and tolerate masters: they start one
	// on each worker, so the control planes drain freely and the PDB holds
	// the first worker's drain; once relaxed, an evicted pod moves to a
	// master (the other worker already has one).
	labels := map[string]string{"app": "web"}
	// The PDB first blocks every eviction (minAvailable 2 of 2): the
	// rollout must stop at the first worker, and continue once the owner
	// relaxes it and runs the command again.
	replicas, minAvail, zero := int32(2), intstr.FromInt32(2), int64(0)
	notCP := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.NodeSelectorOpDoesNotExist}}}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &zero,
					Tolerations: []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					Affinity: &corev1.Affinity{
						NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 100, Preference: notCP}}},
						PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
							{LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: "kubernetes.io/hostname"}}}},
					Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10.1"}}}}}}
	if _, err := admin.AppsV1().Deployments("default").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvail, Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	if _, err := admin.PolicyV1().PodDisruptionBudgets("default").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 2*time.Minute, "the Deployment's 2 pods ready", func() bool {
		d, err := admin.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && d.Status.ReadyReplicas == 2
	})
	step("Deployment web (2 replicas) under a PDB of minAvailable 2, on %s", webNodes(ctx, t, admin))

	bb := <-bundle
	if bb.err != nil {
		t.Fatal(bb.err)
	}
	imageID := s.Sim.CreateImage(onegatesim.Image{Name: "onekube-bundle-" + to.Version, Source: img,
		Template: map[string]string{upgrade.BundleSHA256Attr: bb.sum, "ONEKUBE_BUNDLE_VERSION": to.Version}})
	step("bundle built and registered as image %d", imageID)

	// The user's admin kubeconfig, pointed at the first master's API
	// server (admin.conf names the VM's own balancer).
	env := flowEnv(t, b, s)
	kubeconfig := userKubeconfig(t, m0, masters[0].IP.String())
	cli := func(args ...string) (int, string, string) {
		return onSwitch(t, b, env, onekubeFlow(t), args...)
	}

	svc := strconv.Itoa(s.ID)
	upgradeTo := func(version string, image int) (int, string, string) {
		return cli("upgrade", svc, "--to", version, "--bundle", strconv.Itoa(image), "--kubeconfig", kubeconfig, "--context", "kubernetes-admin@kubernetes")
	}
	refused := func(what, want string, code int, out, errs string) {
		t.Helper()
		if code == 0 || !strings.Contains(errs, want) {
			t.Fatalf("%s: exited %d, want a refusal naming %q:\n%s%s", what, code, want, out, errs)
		}
		if _, err := admin.CoreV1().ConfigMaps(upgrade.PlanNamespace).Get(ctx, upgrade.PlanName, metav1.GetOptions{}); err == nil {
			t.Fatalf("%s: a plan was written", what)
		}
		step("refused, %s: %s", what, lastLines(strings.TrimSpace(errs), 1))
	}

	// Refusals before anything moves. A skipped minor: a bundle image
	// without a version attribute, so the version rule is what refuses.
	unversioned := s.Sim.CreateImage(onegatesim.Image{Name: "unversioned", Source: img, Template: map[string]string{upgrade.BundleSHA256Attr: bb.sum}})
	code, out, errs := upgradeTo("v1.38.0", unversioned)
	refused("a skipped minor", "upgrade refused (skipped-minor)", code, out, errs)
	// A powered-off VM: OneFlow puts the service in WARNING.
	if err := s.Sim.Act(workers[0].ID, "poweroff", true); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "the worker's VM to lose power", func() bool { return s.VM(workers[0].ID).Pid() == 0 })
	code, out, errs = upgradeTo(to.Version, imageID)
	refused("a powered-off worker", "upgrade refused (service-state): service "+svc+" is WARNING", code, out, errs)
	resumed := time.Now()
	if err := s.Sim.Act(workers[0].ID, "resume", false); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, time.Minute, "the worker's VM to boot", func() bool { return s.VM(workers[0].ID).Pid() != 0 })
	// Ready, as its kubelet says after the boot (the Node's condition
	// stays Ready for the 40 s grace of a power cut): a heartbeat or a
	// lease renewal after the resume.
	waitUntil(t, 3*time.Minute, "the worker's kubelet Ready again, and the service RUNNING", func() bool {
		n, err := admin.CoreV1().Nodes().Get(ctx, fmt.Sprintf("worker-%d", workers[0].ID), metav1.GetOptions{})
		if err != nil || !ready(n) || s.Sim.ServiceState(s.ID) != "RUNNING" {
			return false
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.LastHeartbeatTime.After(resumed) {
				return true
			}
		}
		l, err := admin.CoordinationV1().Leases("kube-node-lease").Get(ctx, n.Name, metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.After(resumed)
	})
	waitUntil(t, 2*time.Minute, "the Deployment's 2 pods ready again", func() bool {
		d, err := admin.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && d.Status.ReadyReplicas == 2
	})
	on := webNodes(ctx, t, admin)
	step("the worker resumed; web's pods on %s", on)
	if nw >= 2 && (len(on) != 2 || !strings.HasPrefix(on[0], "worker-") || !strings.HasPrefix(on[1], "worker-")) {
		t.Fatalf("web's pods run on %v, want one on each worker (the PDB must hold a worker's drain, not a master's)", on)
	}

	// The watchers: /readyz through a worker's balancer every 200 ms;
	// the PDB and each Node's step, every 200 ms / 1 s.
	caPEM, err := m0.ReadFile("/etc/kubernetes/pki/ca.crt")
	if err != nil {
		t.Fatal(err)
	}
	pctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	// The PDB's watch ends when the worker is rebooted: its pods die
	// without an eviction, which no PDB can prevent. The client asks
	// through the last worker's balancer, which no reboot takes, so its
	// windows cover the whole rollout (that worker's own upgrade too).
	wctx, stopServing := context.WithCancel(pctx)
	defer stopServing()
	lbVM := workers[len(workers)-1]
	if len(workers) > 1 && lbVM.ID == workers[0].ID {
		t.Fatal("the balancer's worker is the one rebooted")
	}
	lbCtx := wctx // with one worker, the balancer goes with its reboot
	if len(workers) > 1 {
		lbCtx = pctx
	}
	poll := startPoller(lbCtx, fmt.Sprintf("VM %d's local balancer", lbVM.ID), vmcontext.LocalBalancer, caPEM, s.VM(lbVM.ID).DialContext)
	pw := watchPDB(wctx, admin)
	nt := watchNodeSteps(pctx, admin, to.Version)

	code, out, errs = upgradeTo(to.Version, imageID)
	if code != 0 {
		t.Fatalf("onekube-flow upgrade exited %d:\n%s%s", code, out, errs)
	}
	upStart := time.Now()
	step("onekube-flow upgrade: %s", strings.TrimSpace(out))

	// The owner follows it, as the command says, with status --wait: a
	// real process, killed (SIGKILL) once the first master is done.
	follow := startOnSwitch(t, b, env, onekubeFlow(t), "status", svc, "--wait", "20m")
	// A crash: the executor of a node not done yet is killed mid-step
	// (before kubeadm runs, whose process systemd's KillMode would also
	// end) and restarted as its unit's Restart= does; it resumes.
	go crashOnce(pctx, t, s, admin, nt, to.Version, append(masters, workers...))
	// serve itself: the acting master's is killed while a second
	// control plane is drained (or right after its grant) and restarted
	// 2 s later; the next term goes on from the plan ConfigMap.
	serveKilled := make(chan struct{})
	go killServeOnce(pctx, t, s, admin, nt, serveKilled)

	// The CLI killed after the first master, then the same command run
	// again mid-rollout: it continues the rollout (the grants kept, the
	// attempt bumped), neither refused nor started over.
	first := ""
	for _, n := range names {
		if strings.HasPrefix(n, "master-") {
			first = n
			break
		}
	}
	waitUntil(t, 6*time.Minute, first+" to claim done at "+to.Version, func() bool {
		_, d := nt.span(first)
		return !d.IsZero()
	})
	if code, out, errs, exited := follow.kill(); exited {
		t.Errorf("onekube-flow status --wait exited %d before the first master was done, with the rollout under way:\n%s%s", code, out, errs)
	} else {
		step("%s done; onekube-flow status --wait killed (SIGKILL), its last line: %s", first, lastLines(strings.TrimSpace(errs), 1))
	}
	cm, err := admin.CoreV1().ConfigMaps(upgrade.PlanNamespace).Get(ctx, upgrade.PlanName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := cm.Data
	code, out, errs = upgradeTo(to.Version, imageID)
	if code != 0 {
		t.Fatalf("onekube-flow upgrade (again, mid-rollout) exited %d:\n%s%s", code, out, errs)
	}
	if cm, err = admin.CoreV1().ConfigMaps(upgrade.PlanNamespace).Get(ctx, upgrade.PlanName, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	after := cm.Data
	for n, m := range upgrade.Grants(before) {
		if upgrade.Grants(after)[n] != m {
			t.Errorf("the rerun dropped %s's grant %q: %v", n, m, after)
		}
	}
	ba, _ := strconv.Atoi(before[upgrade.KeyAttempt])
	if aa, _ := strconv.Atoi(after[upgrade.KeyAttempt]); aa != ba+1 {
		t.Errorf("attempt %d after the rerun, want %d", aa, ba+1)
	}
	if !strings.Contains(out, "continues where it is") {
		t.Errorf("the rerun mid-rollout says %q, want it to say the rollout continues", strings.TrimSpace(out))
	}
	step("onekube-flow upgrade again mid-rollout (grants before: %d, after: %d): %s", len(upgrade.Grants(before)), len(upgrade.Grants(after)), strings.TrimSpace(out))

	// The blocking PDB stops the rollout at the first worker after the
	// drain timeout, with its reason in the plan and in status; the
	// cluster keeps serving.
	var stopped string
	waitUntil(t, 6*time.Minute, "the rollout to stop on the PDB", func() bool {
		cm, err := admin.CoreV1().ConfigMaps(upgrade.PlanNamespace).Get(ctx, upgrade.PlanName, metav1.GetOptions{})
		stopped = ""
		if err == nil {
			stopped = cm.Data[upgrade.KeyStopped]
		}
		return stopped != ""
	})
	if !strings.Contains(stopped, "drain-blocked") {
		t.Fatalf("rollout stopped with %q, want drain-blocked", stopped)
	}
	if nw >= 2 && !strings.Contains(stopped, "draining node worker-") {
		t.Errorf("the PDB held %q, want the first worker's drain", stopped)
	}
	step("rollout stopped: %s", stopped)
	waitUntil(t, 30*time.Second, "onekube-flow status to show the stop and exit 1", func() bool {
		code, out, errs = cli("status", svc)
		return code == 1 && strings.Contains(out, "UPGRADE STOPPED") && strings.Contains(out, "drain-blocked")
	})
	if _, err := admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("the cluster stopped serving: %v", err)
	}
	// The owner relaxes the PDB and runs the command again: it goes on.
	patch := []byte(`{"spec":{"minAvailable":1}}`)
	if _, err := admin.PolicyV1().PodDisruptionBudgets("default").Patch(ctx, "web", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	code, out, errs = upgradeTo(to.Version, imageID)
	if code != 0 {
		t.Fatalf("onekube-flow upgrade (again) exited %d:\n%s%s", code, out, errs)
	}
	step("PDB relaxed to minAvailable 1; onekube-flow upgrade again: %s", strings.TrimSpace(out))

	// A VM: the worker is rebooted (a power cut and a boot) while serve
	// drains it or right after its grant; its units start again at boot.
	rebooted := make(chan struct{})
	w0 := s.VM(workers[0].ID)
	boots := w0.Boots()
	go rebootOnce(pctx, t, admin, nt, to.Version, fmt.Sprintf("worker-%d", workers[0].ID), w0, stopServing, rebooted)

	// status --wait returns once the service is ready; the upgrade is
	// done when every Node has claimed done at the target. A rollout the
	// reboot stopped (its drain cut short) goes on when the owner runs
	// the command again, as after any stop.
	reran := false
	waitUntil(t, 12*time.Minute, "every node to claim done at "+to.Version, func() bool {
		if nt.done(names) {
			return true
		}
		select {
		case <-rebooted:
		default:
			return false
		}
		cm, err := admin.CoreV1().ConfigMaps(upgrade.PlanNamespace).Get(ctx, upgrade.PlanName, metav1.GetOptions{})
		if err != nil || cm.Data[upgrade.KeyStopped] == "" || reran {
			return false
		}
		reran = true
		step("the rollout stopped after the reboot: %s", cm.Data[upgrade.KeyStopped])
		code, out, errs := upgradeTo(to.Version, imageID)
		if code != 0 {
			t.Fatalf("onekube-flow upgrade (after the reboot) exited %d:\n%s%s", code, out, errs)
		}
		return false
	})
	for what, ch := range map[string]chan struct{}{"serve was never killed": serveKilled, "the worker was never rebooted": rebooted} {
		select {
		case <-ch:
		default:
			t.Errorf("%s", what)
		}
	}
	if w0.Boots() == boots {
		t.Errorf("VM %d did not boot again", workers[0].ID)
	}
	waitUntil(t, time.Minute, "every Node uncordoned", func() bool {
		nodes, err := admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, n := range nodes.Items {
			if n.Spec.Unschedulable {
				return false
			}
		}
		return true
	})
	upEnd := time.Now()
	code, out, errs = cli("status", svc, "--wait", "2m")
	if code != 0 {
		t.Errorf("onekube-flow status --wait exited %d:\n%s%s", code, out, errs)
	}
	t.Logf("onekube-flow status:\n%s", out)
	step("upgrade done in %s", upEnd.Sub(upStart).Round(time.Second))
	stopWatch()
	poll.wait()

	waitKubelets(t, admin, to.Version, names...)
	if sv, err := admin.Discovery().ServerVersion(); err != nil || sv.GitVersion != to.Version {
		t.Errorf("API server version %v, %v", sv, err)
	}
	// kubeadm's sequence on every master: the static pods on their new
	// manifests (etcd 3.6 to 3.7 included).
	for _, m := range masters {
		for _, name := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"} {
			pod, err := admin.CoreV1().Pods("kube-system").Get(ctx, fmt.Sprintf("%s-master-%d", name, m.ID), metav1.GetOptions{})
			if err != nil {
				t.Error(err)
				continue
			}
			want := "registry.k8s.io/" + name + ":" + to.Version
			if name == "etcd" {
				want = "registry.k8s.io/etcd:3.7.0-0"
			}
			if got := pod.Spec.Containers[0].Image; got != want {
				t.Errorf("%s on master %d runs %s, want %s", name, m.ID, got, want)
			}
		}
	}
	members, err := etcdClient(t, b, s, masters).Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := etcdm.Summary(members); got != expectSummary(masters, "voter") {
		t.Errorf("etcd members %q, want %q", got, expectSummary(masters, "voter"))
	}
	if minHealthy, samples := pw.result(); minHealthy < 1 || samples == 0 {
		t.Errorf("the PDB's currentHealthy fell to %d (minAvailable 1) over %d samples", minHealthy, samples)
	} else {
		t.Logf("PDB web: currentHealthy never below %d over %d samples", minHealthy, samples)
	}
	for _, v := range append(masters, workers...) {
		if d := s.Sim.Disks(v.ID); len(d) != 0 {
			t.Errorf("VM %d still has disks %+v", v.ID, d)
		}
	}
	for _, n := range names {
		from, done := nt.span(n)
		t.Logf("node %s: first step at +%s, done at +%s (%s)", n, from.Sub(upStart).Round(100*time.Millisecond),
			done.Sub(upStart).Round(100*time.Millisecond), done.Sub(from).Round(100*time.Millisecond))
	}
	nt.mu.Lock()
	if !strings.Contains(strings.Join(nt.notes, "\n"), "upgrade-node") {
		t.Log("crash: no node was caught at an early step")
	}
	for _, n := range nt.notes {
		t.Log("crash: " + n)
	}
	nt.mu.Unlock()
	t.Logf("%s; longest run of failures: %d", poll.summary(), poll.maxRun())
	// The goal: no failure outlives one retry. A window is measured from
	// the failed request's start to the next success's, so one request
	// that timed out (2 s) followed by a success is a 2 s window and a
	// run of one.
	if run := poll.maxRun(); run > 1 {
		t.Errorf("%d requests in a row failed through the balancer (goal: the next one succeeds)", run)
	}
	if t.Failed() {
		for _, v := range append(masters, workers...) {
			t.Logf("VM %d upgrade-node:\n%s", v.ID, lastLines(s.Daemon(v.ID, "upgrade-node"), 40))
		}
		for _, m := range masters {
			t.Logf("VM %d serve:\n%s", m.ID, lastLines(s.Daemon(m.ID, "serve"), 60))
		}
	}
}

// userKubeconfig writes the master's admin.conf with its server set to
// the master's API server, as the user's machine reaches it.
func userKubeconfig(t *testing.T, m *testbed.VM, ip string) string {
	t.Helper()
	data, err := m.ReadFile("/etc/kubernetes/admin.conf")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.Server = "https://" + net.JoinHostPort(ip, "6443")
	}
	path := filepath.Join(t.TempDir(), "admin.conf")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// pdbWatch samples the PDB's currentHealthy.
type pdbWatch struct {
	mu      sync.Mutex
	min     int32
	samples int
}

func watchPDB(ctx context.Context, c kubernetes.Interface) *pdbWatch {
	w := &pdbWatch{min: 1 << 30}
	go func() {
		for ctx.Err() == nil {
			p, err := c.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "web", metav1.GetOptions{})
			if err == nil && p.Status.ObservedGeneration == p.Generation {
				w.mu.Lock()
				w.min = min(w.min, p.Status.CurrentHealthy)
				w.samples++
				w.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *pdbWatch) result() (int32, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.min, w.samples
}

// nodeSteps records when each Node first claimed a step of the target
// and when it claimed done.
type nodeSteps struct {
	mu              sync.Mutex
	firstAt, doneAt map[string]time.Time
	notes           []string
}

func (ns *nodeSteps) note(s string) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	ns.notes = append(ns.notes, s)
}

func watchNodeSteps(ctx context.Context, c kubernetes.Interface, target string) *nodeSteps {
	ns := &nodeSteps{firstAt: map[string]time.Time{}, doneAt: map[string]time.Time{}}
	go func() {
		for ctx.Err() == nil {
			nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if err == nil {
				now := time.Now()
				ns.mu.Lock()
				for _, n := range nodes.Items {
					v, st, _ := strings.Cut(n.Annotations[upgrade.AnnotationStep], " ")
					if v != target {
						continue
					}
					if _, ok := ns.firstAt[n.Name]; !ok {
						ns.firstAt[n.Name] = now
					}
					if _, ok := ns.doneAt[n.Name]; !ok && st == string(upgrade.StepDone) {
						ns.doneAt[n.Name] = now
					}
				}
				ns.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	return ns
}

func (ns *nodeSteps) done(names []string) bool {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	for _, n := range names {
		if _, ok := ns.doneAt[n]; !ok {
			return false
		}
	}
	return true
}

func (ns *nodeSteps) span(name string) (time.Time, time.Time) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return ns.firstAt[name], ns.doneAt[name]
}

// crashOnce kills the upgrade-node of the first VM seen claiming an early
// step (attach to import-images) and restarts it 2 s later.
func crashOnce(ctx context.Context, t *testing.T, s *testbed.Service, c kubernetes.Interface, nt *nodeSteps, target string, vms []onegatesim.VMInfo) {
	early := map[string]bool{}
	for _, st := range []upgrade.Step{upgrade.StepAttach, upgrade.StepMount, upgrade.StepVerify, upgrade.StepKubeadm, upgrade.StepImages} {
		early[string(st)] = true
	}
	for ctx.Err() == nil {
		nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err == nil {
			for _, n := range nodes.Items {
				v, st, _ := strings.Cut(n.Annotations[upgrade.AnnotationStep], " ")
				if v != target || !early[st] {
					continue
				}
				for _, vm := range vms {
					if !strings.HasSuffix(n.Name, "-"+strconv.Itoa(vm.ID)) {
						continue
					}
					if err := s.KillDaemon(vm.ID, "upgrade-node"); err != nil {
						t.Logf("crash: %v", err)
						return
					}
					nt.note(fmt.Sprintf("killed VM %d's onekubed upgrade-node at step %s", vm.ID, st))
					time.Sleep(2 * time.Second)
					if err := s.RestartDaemon(vm.ID, "upgrade-node"); err != nil {
						t.Logf("crash: restart: %v", err)
					}
					return
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// maxRun is the longest run of failed requests in a row.
func (p *poller) maxRun() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	best, run := 0, 0
	for _, ok := range p.ok {
		if ok {
			run = 0
			continue
		}
		run++
		best = max(best, run)
	}
	return best
}

// killServeOnce kills the acting master's onekubed serve (the Lease's
// holder) once a control plane after the first is being drained (cordoned,
// not yet granted) or has been granted, and restarts it 2 s later.
func killServeOnce(ctx context.Context, t *testing.T, s *testbed.Service, c kubernetes.Interface, nt *nodeSteps, killed chan<- struct{}) {
	for ctx.Err() == nil {
		if at, ok := serveKillPoint(ctx, c); ok {
			l, err := c.CoordinationV1().Leases("kube-system").Get(ctx, "onekube-serve", metav1.GetOptions{})
			if err != nil || l.Spec.HolderIdentity == nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			holder := *l.Spec.HolderIdentity
			id, err := strconv.Atoi(holder[strings.LastIndex(holder, "-")+1:])
			if err != nil {
				t.Logf("crash: lease holder %q", holder)
				return
			}
			if err := s.KillDaemon(id, "serve"); err != nil {
				t.Logf("crash: %v", err)
				return
			}
			nt.note(fmt.Sprintf("killed VM %d's onekubed serve (the acting master) %s", id, at))
			time.Sleep(2 * time.Second)
			if err := s.RestartDaemon(id, "serve"); err != nil {
				t.Logf("crash: restart: %v", err)
			}
			close(killed)
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// serveKillPoint says whether a second control plane is under way.
func serveKillPoint(ctx context.Context, c kubernetes.Interface) (string, bool) {
	cm, err := c.CoreV1().ConfigMaps(upgrade.PlanNamespace).Get(ctx, upgrade.PlanName, metav1.GetOptions{})
	if err != nil {
		return "", false
	}
	grants := upgrade.Grants(cm.Data)
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(grants) == 0 {
		return "", false
	}
	for _, n := range nodes.Items {
		if _, cp := n.Labels["node-role.kubernetes.io/control-plane"]; cp && n.Spec.Unschedulable && grants[n.Name] == "" {
			return "while it drained " + n.Name, true
		}
	}
	if len(grants) >= 2 {
		return fmt.Sprintf("after %d grants", len(grants)), true
	}
	return "", false
}

// rebootOnce reboots the worker's VM once serve has cordoned it (its
// drain under way, or just granted) and it has not started its steps;
// stopServing ends the watchers that run through it first.
func rebootOnce(ctx context.Context, t *testing.T, c kubernetes.Interface, nt *nodeSteps, target, node string, vm *testbed.VM, stopServing func(), rebooted chan<- struct{}) {
	for ctx.Err() == nil {
		n, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err == nil && n.Spec.Unschedulable {
			v, st, _ := strings.Cut(n.Annotations[upgrade.AnnotationStep], " ")
			if v != target || st == string(upgrade.StepAttach) {
				at := "during its drain"
				if cm, err := c.CoreV1().ConfigMaps(upgrade.PlanNamespace).Get(ctx, upgrade.PlanName, metav1.GetOptions{}); err == nil && upgrade.Grants(cm.Data)[node] != "" {
					at = "after its grant"
				}
				stopServing()
				if err := vm.Reboot(); err != nil {
					t.Errorf("rebooting %s: %v", node, err)
				}
				nt.note(fmt.Sprintf("rebooted %s's VM %s (step claimed: %q)", node, at, n.Annotations[upgrade.AnnotationStep]))
				close(rebooted)
				return
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// webNodes is where the Deployment's pods run, sorted.
func webNodes(ctx context.Context, t *testing.T, c kubernetes.Interface) []string {
	t.Helper()
	pods, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	var on []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			on = append(on, p.Spec.NodeName)
		}
	}
	sort.Strings(on)
	return on
}

// bgCommand is a command started on the switch (the user's machine) that
// the test may kill.
type bgCommand struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
	exited   chan error
}

func startOnSwitch(t *testing.T, b *testbed.Bed, env []string, name string, args ...string) *bgCommand {
	t.Helper()
	c := &bgCommand{cmd: exec.Command(name, args...), exited: make(chan error, 1)}
	c.cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.err
	if err := b.InSwitch(c.cmd.Start); err != nil {
		t.Fatal(err)
	}
	go func() { c.exited <- c.cmd.Wait() }()
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		<-c.exited
		c.exited <- nil
	})
	return c
}

// kill sends SIGKILL unless the command already exited (exited true, with
// its code), and returns its output.
func (c *bgCommand) kill() (code int, stdout, stderr string, exited bool) {
	var err error
	select {
	case err = <-c.exited:
		exited = true
	default:
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
		err = <-c.exited
	}
	c.exited <- err
	code = c.cmd.ProcessState.ExitCode()
	return code, c.out.String(), c.err.String(), exited
}
