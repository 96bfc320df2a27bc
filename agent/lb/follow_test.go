package lb

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/onekube/onekube/agent/testbed/loopback"
)

// TestFollowerReadsEndpointsAsANode: with a node's credential (CN
// system:node:<name>, group system:nodes, as kubelet.conf has) and through
// the balancer's dialer, the follower reads the API servers' list from a
// real kube-apiserver running the Node and RBAC authorizers.
func TestFollowerReadsEndpointsAsANode(t *testing.T) {
	t.Parallel()
	srv := loopback.Start(t, loopback.Options{})
	ctx := context.Background()
	admin := srv.Client(t)
	// This loopback API server runs without an endpoint reconciler; write
	// what three API servers under the lease reconciler would publish.
	ep := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default"},
		Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: "192.0.2.10"}, {IP: "192.0.2.11"}, {IP: "192.0.2.12"}},
			Ports:     []corev1.EndpointPort{{Name: "https", Port: 6443, Protocol: corev1.ProtocolTCP}},
		}},
	}
	if _, err := admin.CoreV1().Endpoints("default").Create(ctx, ep, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		_, err = admin.CoreV1().Endpoints("default").Update(ctx, ep, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	node, err := srv.SignClient("system:node:worker-7", "system:nodes")
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(t.TempDir(), "kubelet.conf")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: srv.URL, CertificateAuthorityData: srv.CAPEM}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{ClientCertificateData: node.CertData, ClientKeyData: node.KeyData}
	cfg.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "x"
	if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
		t.Fatal(err)
	}

	b := &Balancer{}
	b.SetBackends([]string{strings.TrimPrefix(srv.URL, "https://")})
	f := &Follower{Balancer: b, Kubeconfig: filepath.Join(t.TempDir(), "absent.conf"), Endpoint: "127.0.0.1:6444"}
	if _, err := f.Once(ctx); err != ErrNoCredential {
		t.Fatalf("without kubelet.conf: %v, want ErrNoCredential", err)
	}
	f.Kubeconfig = kc
	got, err := f.Once(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "192.0.2.10:6443 192.0.2.11:6443 192.0.2.12:6443" {
		t.Errorf("backends %v", got)
	}
}
