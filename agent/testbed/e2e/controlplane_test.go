//go:build realbed

package e2e

import (
	"context"
	"net/netip"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/testbed"
)

// TestBedControlPlaneJoin: a second control plane joins with the real
// `kubeadm join --control-plane` (uploaded certificates, etcd member-add
// over the bridge), for the HA work to start from. Its own API server must
// answer, and its static pods be mirrored.
func TestBedControlPlaneJoin(t *testing.T) {
	b := newBed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cp1, err := b.Boot(testbed.VMSpec{Name: "cp1", IP: netip.MustParseAddr("192.0.2.20")})
	if err != nil {
		t.Fatal(err)
	}
	c, out, err := b.InitControlPlane(ctx, cp1, testbed.NodeOptions{NodeName: "cp-20"})
	if err != nil {
		t.Fatalf("kubeadm init: %v\n%s", err, out)
	}
	cp2, err := b.Boot(testbed.VMSpec{Name: "cp2", IP: netip.MustParseAddr("192.0.2.21")})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if out, err := c.Join(ctx, cp2, testbed.NodeOptions{NodeName: "cp-21", ControlPlane: true}); err != nil {
		t.Fatalf("kubeadm join --control-plane: %v\n%s", err, out)
	}
	t.Logf("control-plane join took %s", time.Since(start).Round(time.Millisecond))
	cfg, err := c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	waitReady(t, client, map[string]string{"cp-20": "192.0.2.20", "cp-21": "192.0.2.21"})
	n, err := client.CoreV1().Nodes().Get(ctx, "cp-21", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := n.Labels["node-role.kubernetes.io/control-plane"]; !ok {
		t.Errorf("cp-21 lacks the control-plane label: %v", n.Labels)
	}
	for _, p := range []string{"etcd-cp-21", "kube-apiserver-cp-21"} {
		waitPodRunning(t, client, "kube-system", p)
	}
	// The second API server, reached directly through the switch.
	cfg2, err := b.RESTConfig(cp2, "/etc/kubernetes/admin.conf")
	if err != nil {
		t.Fatal(err)
	}
	cfg2.Host = "https://192.0.2.21:6443"
	body, err := kubernetes.NewForConfigOrDie(cfg2).Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil || string(body) != "ok" {
		t.Errorf("cp-21's API server /readyz: %q, %v", body, err)
	}
}
