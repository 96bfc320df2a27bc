package serve

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/system/systemtest"
	vmcontext "github.com/onekube/onekube/context"
)

// node creates a Node as a kubelet registers it: providerID "" for one
// registered before the provider ID, label "" for none.
func node(t *testing.T, cs kubernetes.Interface, name, providerID, label string, ready corev1.ConditionStatus) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	if label != "" {
		n.Labels[kubeadm.LabelVMID] = label
	}
	if ready != "" {
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}
	}
	if _, err := cs.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A kubelet can rewrite its own onekube.io/vm-id label at any time, but
// not its spec.providerID: the Node-to-VM map follows the provider ID,
// and for a Node registered before it the name, so a relabeled kubelet
// makes no other VM look joined (no token for it, its Node deleted with
// the wrong VM) or itself look unjoined (a token minted for it).
func TestNodesByVMPrefersProviderID(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	node(t, cs, "worker-11", "one://11", "12", corev1.ConditionTrue)  // relabeled to VM 12
	node(t, cs, "worker-13", "one://13", "13", corev1.ConditionTrue)  // honest
	node(t, cs, "worker-14", "", "15", corev1.ConditionTrue)          // older Node, relabeled to VM 15
	node(t, cs, "worker-16", "", "16", corev1.ConditionTrue)          // older Node, honest
	node(t, cs, "worker-17", "one://13", "13", corev1.ConditionTrue)  // VM 17's kubelet re-registered with 13's provider ID: binds neither
	node(t, cs, "gpu-box", "", "", corev1.ConditionTrue)              // an admin's Node: never judged
	node(t, cs, "cloud-1", "aws:///i-1", "18", corev1.ConditionTrue)  // another provider: never judged
	node(t, cs, "bad-19", "one://019", "19", corev1.ConditionTrue)    // a malformed one of ours: never judged
	node(t, cs, "worker-20", "one://20", "", corev1.ConditionUnknown) // provider ID only

	got, err := nodesByVM(context.Background(), cs)
	if err != nil {
		t.Fatal(err)
	}
	names := map[int]string{}
	for id, n := range got {
		names[id] = n.Name
	}
	want := map[int]string{11: "worker-11", 14: "worker-14", 16: "worker-16", 20: "worker-20"}
	for id, name := range want {
		if names[id] != name {
			t.Errorf("VM %d: Node %q, want %q", id, names[id], name)
		}
	}
	if n := names[13]; n != "worker-13" {
		t.Errorf("VM 13: Node %q, want worker-13 (worker-17's provider ID is not its name's)", n)
	}
	for _, id := range []int{12, 15, 17, 18, 19} {
		if n, ok := names[id]; ok {
			t.Errorf("VM %d mapped to Node %q, which only a label names", id, n)
		}
	}

	// The same through the tokens loop: VMs 12 and 15 (named only by
	// relabeled kubelets) wait; 11 and 14 (whose kubelets relabeled
	// themselves) do not.
	og := newFakeService(16)
	for _, id := range []int{11, 12, 14, 15, 16} {
		og.add("worker", id, nil)
	}
	tk := &Tokens{OneGate: og, Client: cs, Clock: systemtest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))}
	mustTick(t, tk)
	if w := tk.report.Waiting; !slices.Equal(w, []int{12, 15}) {
		t.Errorf("waiting %v, want [12 15]", w)
	}
}

// nodeVM binds a Node to a VM only when its provider ID and its name
// agree; every other mark may only withhold.
func TestNodeVM(t *testing.T) {
	t.Parallel()
	mk := func(name, providerID, label string) corev1.Node {
		n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}, Spec: corev1.NodeSpec{ProviderID: providerID}}
		if label != "" {
			n.Labels[kubeadm.LabelVMID] = label
		}
		return n
	}
	for _, tc := range []struct {
		name, node, providerID, label string
		want                          nodeBinding
	}{
		{"honest", "worker-13", "one://13", "13", nodeBinding{VM: 13, ByProvider: true, Claims: []int{13}}},
		{"relabeled", "worker-11", "one://11", "12", nodeBinding{VM: 11, ByProvider: true, Claims: []int{11}}},
		{"re-registered with another VM's provider ID", "worker-17", "one://13", "13", nodeBinding{VM: -1, Claims: []int{13, 17}}},
		{"a master's ID on a worker's name", "worker-17", "one://10", "", nodeBinding{VM: -1, Claims: []int{10, 17}}},
		{"a name without an ID", "gpu-box", "one://20", "", nodeBinding{VM: 20, ByProvider: true, Claims: []int{20}}},
		{"a name with a non-canonical ID", "worker-017", "one://13", "", nodeBinding{VM: 13, ByProvider: true, Claims: []int{13}}},
		{"older Node, named", "worker-14", "", "15", nodeBinding{VM: 14, Claims: []int{14}}},
		{"older Node, label only", "gpu", "", "16", nodeBinding{VM: 16, Claims: []int{16}}},
		{"older Node, bad label", "gpu", "", "016", nodeBinding{VM: -1}},
		{"not onekube's", "admin-box-3", "", "", nodeBinding{VM: -1}},
		{"another provider", "cloud-1", "aws:///i-1", "18", nodeBinding{VM: -1}},
		{"ours, malformed", "bad-19", "one://019", "19", nodeBinding{VM: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := nodeVM(mk(tc.node, tc.providerID, tc.label))
			if got.VM != tc.want.VM || got.ByProvider != tc.want.ByProvider || !slices.Equal(got.Claims, tc.want.Claims) {
				t.Errorf("nodeVM(%s, %q, label %q) = %+v, want %+v", tc.node, tc.providerID, tc.label, got, tc.want)
			}
		})
	}
}

// Nothing a VM publishes earns it a token: a RUNNING VM with a Node of its
// provider ID gets none however it claims to wait, and neither does a
// joined worker a sibling writes PHASE=kubeadm-join on.
func TestTokensIgnorePublishedPhases(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	clock := systemtest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	og := newFakeService(10)
	og.add("master", 10, nil)
	node(t, cs, "master-10", "one://10", "10", corev1.ConditionTrue)
	waits := func(phase string) map[string]string {
		return map[string]string{vmcontext.KeyPubPhase: phase, vmcontext.KeyReady: "NO"}
	}
	// A Node by provider ID only, the agent claims to wait.
	og.add("worker", 11, waits("wait-master"))
	node(t, cs, "worker-11", "one://11", "", corev1.ConditionTrue)
	// Its kubelet relabeled itself away, and it claims to join.
	og.add("worker", 12, waits("kubeadm-join"))
	node(t, cs, "worker-12", "one://12", "99", corev1.ConditionTrue)
	// NotReady (its CNI) is a member too.
	og.add("worker", 13, waits("render-join"))
	node(t, cs, "worker-13", "one://13", "13", corev1.ConditionFalse)
	// A joined worker a sibling rewrote.
	og.add("worker", 14, map[string]string{vmcontext.KeyReady: "YES", vmcontext.KeyPubPhase: "done"})
	node(t, cs, "worker-14", "one://14", "14", corev1.ConditionTrue)
	og.set(func(f *fakeService) { f.vms[14].UserTemplate[vmcontext.KeyPubPhase] = "kubeadm-join" })
	// A master claiming to wait for its certificate key.
	og.add("master", 15, waits("wait-cert-key"))
	node(t, cs, "master-15", "one://15", "15", corev1.ConditionTrue)

	tk := &Tokens{OneGate: og, Client: cs, Clock: clock}
	for range 3 {
		mustTick(t, tk)
		clock.Advance(DefaultVerdictAge)
	}
	if rep := tk.report; len(rep.Waiting) != 0 || rep.Tokens != 0 {
		t.Errorf("claims earned a token: %+v", rep)
	}
	if toks := tokenSecrets(t, cs); len(toks) != 0 {
		t.Errorf("%d tokens minted", len(toks))
	}
	for _, id := range []int{11, 12, 13, 14, 15} {
		if og.vmReads(id) != 0 {
			t.Errorf("read VM %d, which has a Node whose kubelet reports", id)
		}
	}
}
