//go:build realbed

package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/testbed"
)

// bootVM boots a bare VM of the bed at ip.
func bootVM(t *testing.T, b *testbed.Bed, name, ip string) *testbed.VM {
	t.Helper()
	vm, err := b.Boot(testbed.VMSpec{Name: name, IP: netip.MustParseAddr(ip)})
	if err != nil {
		t.Fatal(err)
	}
	return vm
}

// TestBedKubeadm proves the bed with kubeadm alone: the real kubeadm init
// on one VM and join on two others (node names given in the configs, since
// every VM has the image's hostname), then refusals from real discovery.
func TestBedKubeadm(t *testing.T) {
	b := newBed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	boot := func(name, ip string) *testbed.VM { return bootVM(t, b, name, ip) }
	m := boot("cp", "192.0.2.10")
	start := time.Now()
	c, out, err := b.InitControlPlane(ctx, m, testbed.NodeOptions{NodeName: "cp-10"})
	if err != nil {
		t.Fatalf("kubeadm init: %v\n%s", err, out)
	}
	t.Logf("kubeadm init took %s", time.Since(start).Round(time.Millisecond))
	if !strings.Contains(out, "Your Kubernetes control-plane has initialized successfully") {
		t.Errorf("kubeadm init output:\n%s", out)
	}
	cfg, err := c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)

	w1 := boot("w1", "192.0.2.11")
	start = time.Now()
	if out, err := c.Join(ctx, w1, testbed.NodeOptions{NodeName: "worker-11"}); err != nil {
		t.Fatalf("kubeadm join: %v\n%s", err, out)
	}
	t.Logf("kubeadm join took %s", time.Since(start).Round(time.Millisecond))
	w2 := boot("w2", "192.0.2.12")
	if out, err := c.Join(ctx, w2, testbed.NodeOptions{NodeName: "worker-12"}); err != nil {
		t.Fatalf("kubeadm join: %v\n%s", err, out)
	}
	nodes := map[string]string{"cp-10": "192.0.2.10", "worker-11": "192.0.2.11", "worker-12": "192.0.2.12"}
	waitReady(t, client, nodes)

	// The workers' TLS bootstrap went through real CSRs, approved and
	// signed by the real kube-controller-manager.
	csrs, err := client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	issued := map[string]bool{}
	for _, r := range csrs.Items {
		if len(r.Status.Certificate) > 0 && strings.HasPrefix(r.Spec.Username, "system:bootstrap:") {
			issued[r.Spec.Username] = true
		}
	}
	if want := "system:bootstrap:" + strings.Split(c.Token, ".")[0]; !issued[want] {
		t.Errorf("no issued CSR requested by %s: %v", want, issued)
	}
	// The control plane runs from its static pods, mirrored in the API.
	for _, p := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		waitPodRunning(t, client, "kube-system", p+"-cp-10")
	}
	// A kubelet creates its Lease after it registers its Node; a loaded
	// machine shows the gap (CI saw a Ready Node with no Lease yet).
	for name := range nodes {
		waitUntil(t, 30*time.Second, "the node lease of "+name, func() bool {
			_, err := client.CoordinationV1().Leases("kube-node-lease").Get(ctx, name, metav1.GetOptions{})
			return err == nil
		})
	}

	// Real discovery refuses a wrong CA pin and a token whose secret is
	// wrong (the JWS signature of cluster-info does not verify).
	bad := boot("bad", "192.0.2.13")
	wrongHash := "sha256:" + strings.Repeat("ab", 32)
	out, err = c.Join(ctx, bad, testbed.NodeOptions{NodeName: "bad-13", CAHash: wrongHash, DiscoveryTimeout: 30 * time.Second})
	if err == nil || !strings.Contains(out, "none of the public keys") {
		t.Errorf("join with a wrong CA hash: %v\n%s", err, out)
	}
	wrongToken := strings.Split(c.Token, ".")[0] + ".0000000000000000"
	out, err = c.Join(ctx, bad, testbed.NodeOptions{NodeName: "bad-13", Token: wrongToken, DiscoveryTimeout: 30 * time.Second})
	if err == nil || !strings.Contains(out, "failed to verify JWS signature") {
		t.Errorf("join with a wrong token secret: %v\n%s", err, out)
	}
	if _, err := client.CoreV1().Nodes().Get(ctx, "bad-13", metav1.GetOptions{}); err == nil {
		t.Error("a refused node registered anyway")
	}

	// kubectl inside the control-plane VM, with kubeadm's admin.conf.
	out, err = m.Run(ctx, "kubectl", "--kubeconfig", "/etc/kubernetes/admin.conf", "get", "nodes", "-o", "wide")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for name, ip := range nodes {
		if !strings.Contains(out, name) || !strings.Contains(out, ip) {
			t.Errorf("kubectl get nodes lacks %s (%s):\n%s", name, ip, out)
		}
	}

	// A worker reset by the real kubeadm: reset stops the kubelet and
	// removes its containers through the CRI.
	if out, err := w2.Run(ctx, "kubeadm", "reset", "-f"); err != nil {
		t.Errorf("kubeadm reset: %v\n%s", err, out)
	}
}

func waitPodRunning(t *testing.T, c kubernetes.Interface, ns, name string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		p, err := c.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && p.Status.Phase == corev1.PodRunning {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("pod %s/%s not Running: %v", ns, name, err)
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waitReady waits until each node exists with its InternalIP and is Ready.
func waitReady(t *testing.T, c kubernetes.Interface, want map[string]string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		missing := []string{}
		for name, ip := range want {
			n, err := c.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
			if err != nil || !ready(n) || internalIP(n) != ip {
				missing = append(missing, name)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nodes not Ready with their IP: %v", missing)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func internalIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

// TestBedSwitchKeepsItsAddress: VMs booting onto the switch never change
// the gateway's MAC. A bridge without an address of its own takes its
// lowest port's, which moved under the VMs' ARP caches whenever a new
// VM's veth sorted lower, and stalled their OneGate traffic for seconds
// (TestHostileSibling's attacker missed a 9 s token window that way).
func TestBedSwitchKeepsItsAddress(t *testing.T) {
	b := newBed(t)
	before, err := b.SwitchLink()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		bootVM(t, b, fmt.Sprintf("v%d", i), fmt.Sprintf("192.0.2.%d", 20+i))
		now, err := b.SwitchLink()
		if err != nil {
			t.Fatal(err)
		}
		if f := strings.Fields(now); len(f) < 3 || f[2] != testbed.SwitchMAC {
			t.Fatalf("after VM %d booted the switch reads %q (before any VM: %q), want address %s", i, now, before, testbed.SwitchMAC)
		}
	}
}
