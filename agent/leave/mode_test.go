package leave

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/onekube/onekube/context/onegate"
)

func TestModeFor(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		state, lcm int
		want       Mode
	}{
		"terminate (scale-down, onevm terminate)": {onegate.StateActive, onegate.LCMShutdown, ModeTerminate},
		"poweroff":                 {onegate.StateActive, onegate.LCMShutdownPoweroff, ModeDrain},
		"undeploy":                 {onegate.StateActive, onegate.LCMShutdownUndeploy, ModeDrain},
		"guest reboot":             {onegate.StateActive, onegate.LCMRunning, ModeNone},
		"hotplug or anything else": {onegate.StateActive, 17, ModeNone},
		"not active":               {onegate.StatePoweroff, 0, ModeNone},
	} {
		got, why := ModeFor(&onegate.VM{State: c.state, LCMState: c.lcm})
		if got != c.want || why == "" {
			t.Errorf("%s: %s (%s), want %s", name, got, why, c.want)
		}
	}
}

func TestPodsToEvict(t *testing.T) {
	t.Parallel()
	yes := true
	pod := func(name string, mut func(p *corev1.Pod)) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
		if mut != nil {
			mut(&p)
		}
		return p
	}
	all := []corev1.Pod{
		pod("plain", nil),
		pod("static", func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "h"} }),
		pod("ds", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "x", Controller: &yes}}
		}),
		pod("rs", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "x", Controller: &yes}}
		}),
		pod("ds-not-controller", func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "x"}} }),
		pod("done", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }),
	}
	evict, skipped := podsToEvict(all)
	var names []string
	for _, p := range evict {
		names = append(names, p.Name)
	}
	if got := len(names); got != 4 || names[0] != "plain" || names[1] != "rs" || names[2] != "ds-not-controller" || names[3] != "done" {
		t.Errorf("evict %v", names)
	}
	if skipped["ns/static"] != "static pod" || skipped["ns/ds"] != "DaemonSet pod" || len(skipped) != 2 {
		t.Errorf("skipped %v", skipped)
	}
}
