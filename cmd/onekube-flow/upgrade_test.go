package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/onekube/onekube/agent/kversion"
	"github.com/onekube/onekube/agent/upgrade"
	"github.com/onekube/onekube/flow/register"
	"github.com/onekube/onekube/flow/status"
)

func kubeNode(name, ver string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: ver}}}
}

func TestRunUpgrade(t *testing.T) {
	sum := strings.Repeat("d", 64)
	running := status.Report{ServiceID: 7, ServiceState: "RUNNING", VMs: []status.Row{
		{Role: "master", VM: status.VM{ID: 1, State: "ACTIVE", LCMState: "RUNNING"}},
		{Role: "worker", VM: status.VM{ID: 2, State: "ACTIVE", LCMState: "RUNNING"}},
	}}
	poweroff := running
	poweroff.VMs = []status.Row{running.VMs[0], {Role: "worker", VM: status.VM{ID: 2, State: "POWEROFF", LCMState: "LCM_INIT"}}}
	warning := running
	warning.ServiceState = "WARNING"
	img := register.ImageFacts{Name: "bundle", State: "READY", Attrs: map[string]string{upgrade.BundleSHA256Attr: sum, bundleVersionAttr: "v1.37.2"}}
	withAttrs := func(state string, attrs ...string) register.ImageFacts {
		f := register.ImageFacts{Name: "bundle", State: state, Attrs: map[string]string{}}
		for i := 0; i+1 < len(attrs); i += 2 {
			f.Attrs[attrs[i]] = attrs[i+1]
		}
		return f
	}
	for name, tc := range map[string]struct {
		report  status.Report
		img     register.ImageFacts
		nodes   []string // versions
		etcd    error
		to      string
		flagSHA string
		want    string
		plan    bool
	}{
		"minor":             {report: running, img: img, nodes: []string{"v1.36.3", "v1.36.3"}, to: "v1.37.2", want: "upgrade to v1.37.2 planned (bundle image 5, attempt 1): 0 of 2", plan: true},
		"skipped minor":     {report: running, img: img, nodes: []string{"v1.35.3", "v1.36.3"}, to: "v1.37.2", want: "(skipped-minor)"},
		"downgrade":         {report: running, img: img, nodes: []string{"v1.37.2"}, to: "v1.36.3", want: "(downgrade)"},
		"vm powered off":    {report: poweroff, img: img, nodes: []string{"v1.36.3"}, to: "v1.37.2", want: "(vm-state): VM 2 (worker) is POWEROFF"},
		"service warning":   {report: warning, img: img, nodes: []string{"v1.36.3"}, to: "v1.37.2", want: "(service-state): service 7 is WARNING"},
		"etcd not ready":    {report: running, img: img, nodes: []string{"v1.36.3"}, to: "v1.37.2", etcd: errors.New("[-]etcd failed"), want: "(etcd): [-]etcd failed"},
		"bundle of v1.37.1": {report: running, img: withAttrs("READY", upgrade.BundleSHA256Attr, sum, bundleVersionAttr, "v1.37.1"), nodes: []string{"v1.36.3"}, to: "v1.37.2", want: "(not-in-bundle)"},
		"persistent image":  {report: running, img: register.ImageFacts{Persistent: true, State: "READY", Attrs: img.Attrs}, nodes: []string{"v1.36.3"}, to: "v1.37.2", want: "persistent"},
		"no sha attribute":  {report: running, img: withAttrs("READY", bundleVersionAttr, "v1.37.2"), nodes: []string{"v1.36.3"}, to: "v1.37.2", want: "no valid ONEKUBE_BUNDLE_SHA256"},
		"sha by flag":       {report: running, img: withAttrs("READY", bundleVersionAttr, "v1.37.2"), flagSHA: sum, nodes: []string{"v1.36.3"}, to: "v1.37.2", want: "planned", plan: true},
		"image in use":      {report: running, img: withAttrs("USED", upgrade.BundleSHA256Attr, sum, bundleVersionAttr, "v1.37.2"), nodes: []string{"v1.36.3"}, to: "v1.37.2", want: "planned", plan: true},
		// The release must be established before any drain: the nodes
		// check the manifest only once the first master is drained.
		"no version attribute": {report: running, img: withAttrs("READY", upgrade.BundleSHA256Attr, sum), nodes: []string{"v1.36.3"}, to: "v1.37.2",
			want: "(not-in-bundle): image 5 (bundle) has no ONEKUBE_BUNDLE_VERSION attribute"},
		"no version, sha by flag": {report: running, img: withAttrs("READY"), flagSHA: sum, nodes: []string{"v1.36.3"}, to: "v1.37.2", want: "(not-in-bundle)"},
		"version unparsable":      {report: running, img: withAttrs("READY", upgrade.BundleSHA256Attr, sum, bundleVersionAttr, "1.37"), nodes: []string{"v1.36.3"}, to: "v1.37.2", want: "(not-in-bundle): image 5 (bundle): ONEKUBE_BUNDLE_VERSION"},
		// A skipped minor names its rule even for an unversioned image.
		"skipped minor, no version": {report: running, img: withAttrs("READY", upgrade.BundleSHA256Attr, sum), nodes: []string{"v1.36.3"}, to: "v1.38.0", want: "(skipped-minor)"},
		"image disabled":            {report: running, img: withAttrs("DISABLED", upgrade.BundleSHA256Attr, sum, bundleVersionAttr, "v1.37.2"), nodes: []string{"v1.36.3"}, to: "v1.37.2", want: "(bundle-state): image 5 (bundle) is DISABLED"},
		"image locked":              {report: running, img: withAttrs("LOCKED", upgrade.BundleSHA256Attr, sum, bundleVersionAttr, "v1.37.2"), nodes: []string{"v1.36.3"}, to: "v1.37.2", want: "(bundle-state)"},
		"image in error":            {report: running, img: withAttrs("ERROR", upgrade.BundleSHA256Attr, sum, bundleVersionAttr, "v1.37.2"), nodes: []string{"v1.36.3"}, to: "v1.37.2", want: "(bundle-state)"},
		"image state unknown":       {report: running, img: withAttrs("", upgrade.BundleSHA256Attr, sum, bundleVersionAttr, "v1.37.2"), nodes: []string{"v1.36.3"}, to: "v1.37.2", want: "(bundle-state)"},
	} {
		t.Run(name, func(t *testing.T) {
			cs := fake.NewClientset()
			for i, v := range tc.nodes {
				cs.CoreV1().Nodes().Create(context.Background(), kubeNode("n"+string(rune('a'+i)), v), metav1.CreateOptions{})
			}
			d := upgradeDeps{Report: tc.report, Kube: cs,
				Image:     func(context.Context, int) (register.ImageFacts, error) { return tc.img, nil },
				EtcdReady: func(context.Context) error { return tc.etcd }}
			target, _ := kversion.ParseVersion(tc.to)
			msg, err := runUpgrade(context.Background(), d, target, upgradeFlags{bundle: 5, batch: 1, bundleSHA: tc.flagSHA})
			got := msg
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tc.want) {
				t.Fatalf("runUpgrade = %q, want %q", got, tc.want)
			}
			cm, gerr := cs.CoreV1().ConfigMaps("kube-system").Get(context.Background(), upgrade.PlanName, metav1.GetOptions{})
			if tc.plan != (gerr == nil) {
				t.Fatalf("plan written %v, want %v", gerr == nil, tc.plan)
			}
			if tc.plan && (cm.Data[upgrade.KeyBundleSHA256] != sum || cm.Data[upgrade.KeyTarget] != "v1.37.2") {
				t.Fatalf("plan %v", cm.Data)
			}
		})
	}
}

// Running the command again after a stop continues: the grants are
// kept, the stop cleared, the attempt bumped.
func TestRunUpgradeAgainContinues(t *testing.T) {
	sum := strings.Repeat("d", 64)
	cs := fake.NewClientset(kubeNode("m1", "v1.37.2"), kubeNode("w1", "v1.36.3"))
	p := upgrade.Plan{Target: mustV("v1.37.2"), BundleImage: 5, BundleSHA: sum, Attempt: 1}
	data := p.Data()
	data[upgrade.KeyGrantPrefix+"m1"] = "apply"
	data[upgrade.KeyStopped] = "upgrade refused (drain-blocked): draining node w1"
	cs.CoreV1().ConfigMaps("kube-system").Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: upgrade.PlanName, Namespace: "kube-system"}, Data: data}, metav1.CreateOptions{})
	bundleV := "v1.37.2"
	d := upgradeDeps{Report: status.Report{ServiceState: "RUNNING", VMs: []status.Row{{VM: status.VM{ID: 1, State: "ACTIVE", LCMState: "RUNNING"}}}}, Kube: cs,
		Image: func(context.Context, int) (register.ImageFacts, error) {
			return register.ImageFacts{State: "READY", Attrs: map[string]string{upgrade.BundleSHA256Attr: sum, bundleVersionAttr: bundleV}}, nil
		},
		EtcdReady: func(context.Context) error { return nil }}
	msg, err := runUpgrade(context.Background(), d, mustV("v1.37.2"), upgradeFlags{bundle: 5, batch: 1})
	if err != nil || !strings.Contains(msg, "attempt 2): 1 of 2 nodes already at v1.37.2") {
		t.Fatalf("runUpgrade = %q, %v", msg, err)
	}
	cm, _ := cs.CoreV1().ConfigMaps("kube-system").Get(context.Background(), upgrade.PlanName, metav1.GetOptions{})
	if cm.Data[upgrade.KeyStopped] != "" || cm.Data[upgrade.KeyGrantPrefix+"m1"] != "apply" {
		t.Fatalf("plan after rerun: %v", cm.Data)
	}
	// Another target while m1 is let go (its bundle's): refused.
	bundleV = "v1.37.3"
	if _, err := runUpgrade(context.Background(), d, mustV("v1.37.3"), upgradeFlags{bundle: 5, batch: 1}); err == nil || !strings.Contains(err.Error(), "(in-progress)") {
		t.Fatalf("another target mid-way: %v", err)
	}
}

// Running the command again while the rollout is under way (the owner's
// status --wait was killed, say): it continues, keeping serve's grants and
// cordons, and a grant serve writes between the CLI's read and its write
// (a conflict on the ConfigMap's resourceVersion) is merged, not an error.
func TestRunUpgradeAgainMidRollout(t *testing.T) {
	sum := strings.Repeat("d", 64)
	cs := fake.NewClientset(kubeNode("m1", "v1.37.2"), kubeNode("m2", "v1.36.3"), kubeNode("m3", "v1.36.3"), kubeNode("w1", "v1.36.3"))
	p := upgrade.Plan{Target: mustV("v1.37.2"), BundleImage: 5, BundleSHA: sum, Attempt: 1}
	data := p.Data()
	data[upgrade.KeyBatch] = "1"
	data[upgrade.KeyGrantPrefix+"m1"] = "apply"
	data[upgrade.KeyCordonPrefix+"m2"] = "true"
	cs.CoreV1().ConfigMaps("kube-system").Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: upgrade.PlanName, Namespace: "kube-system"}, Data: data}, metav1.CreateOptions{})
	// serve grants m2 just after the CLI read the plan: the CLI's first
	// write is refused as stale, as the API server refuses it.
	raced := false
	cs.PrependReactor("update", "configmaps", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if raced {
			return false, nil, nil
		}
		raced = true
		obj, err := cs.Tracker().Get(corev1.SchemeGroupVersion.WithResource("configmaps"), "kube-system", upgrade.PlanName)
		if err != nil {
			return true, nil, err
		}
		cm := obj.(*corev1.ConfigMap).DeepCopy()
		cm.Data[upgrade.KeyGrantPrefix+"m2"] = "node"
		if err := cs.Tracker().Update(corev1.SchemeGroupVersion.WithResource("configmaps"), cm, "kube-system"); err != nil {
			return true, nil, err
		}
		return true, nil, apierrors.NewConflict(corev1.Resource("configmaps"), upgrade.PlanName, errors.New("the object has been modified"))
	})
	bundleV := "v1.37.2"
	d := upgradeDeps{Report: status.Report{ServiceState: "RUNNING", VMs: []status.Row{{VM: status.VM{ID: 1, State: "ACTIVE", LCMState: "RUNNING"}}}}, Kube: cs,
		Image: func(context.Context, int) (register.ImageFacts, error) {
			return register.ImageFacts{State: "READY", Attrs: map[string]string{upgrade.BundleSHA256Attr: sum, bundleVersionAttr: bundleV}}, nil
		},
		EtcdReady: func(context.Context) error { return nil }}
	msg, err := runUpgrade(context.Background(), d, mustV("v1.37.2"), upgradeFlags{bundle: 5, batch: 1})
	if err != nil {
		t.Fatalf("runUpgrade mid-rollout: %v", err)
	}
	if want := "upgrade to v1.37.2 continues where it is, 2 node(s) already let go (bundle image 5, attempt 2): 1 of 4 nodes already at v1.37.2"; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
	cm, _ := cs.CoreV1().ConfigMaps("kube-system").Get(context.Background(), upgrade.PlanName, metav1.GetOptions{})
	for k, v := range map[string]string{upgrade.KeyGrantPrefix + "m1": "apply", upgrade.KeyGrantPrefix + "m2": "node",
		upgrade.KeyCordonPrefix + "m2": "true", upgrade.KeyAttempt: "2", upgrade.KeyTarget: "v1.37.2"} {
		if cm.Data[k] != v {
			t.Errorf("plan after the rerun: %s = %q, want %q (%v)", k, cm.Data[k], v, cm.Data)
		}
	}
	// Another target mid-rollout is still refused, naming the one under way.
	bundleV = "v1.37.3"
	if _, err := runUpgrade(context.Background(), d, mustV("v1.37.3"), upgradeFlags{bundle: 5, batch: 1}); err == nil || !strings.Contains(err.Error(), "upgrade refused (in-progress)") {
		t.Fatalf("another target mid-rollout: %v", err)
	}
}

func mustV(s string) kversion.Version {
	v, err := kversion.ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

func TestUpgradeUsage(t *testing.T) {
	for _, args := range [][]string{
		{"upgrade", "k", "--bundle", "5"},
		{"upgrade", "k", "--to", "1.37.2", "--bundle", "5"},
		{"upgrade", "k", "--to", "v1.37.2"},
		{"upgrade", "k", "--to", "v1.37.2", "--bundle", "5", "--bundle-sha256", "xyz"},
		{"upgrade", "--to", "v1.37.2", "--bundle", "5"},
	} {
		var out, errb strings.Builder
		a := &app{stdout: &out, stderr: &errb}
		if code := a.run(args); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, errb.String())
		}
	}
}
