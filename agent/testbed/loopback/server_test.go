package loopback_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/onekube/onekube/agent/testbed/loopback"
)

// The harness gives a working admin client, and the controller manager's
// bootstrap signer acts on a token Secret like in a kubeadm cluster.
func TestLoopbackControlPlane(t *testing.T) {
	s := loopback.Start(t, loopback.Options{ControllerManager: true})
	cs := s.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); err != nil {
		t.Fatalf("admin client: %v", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cluster-info", Namespace: "kube-public"},
		Data: map[string]string{"kubeconfig": "apiVersion: v1\nkind: Config\nclusters: []\n"}}
	if _, err := cs.CoreV1().ConfigMaps("kube-public").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-abcdef", Namespace: "kube-system"},
		Type:       corev1.SecretTypeBootstrapToken,
		StringData: map[string]string{"token-id": "abcdef", "token-secret": "0123456789abcdef", "usage-bootstrap-signing": "true", "usage-bootstrap-authentication": "true"},
	}
	if _, err := cs.CoreV1().Secrets("kube-system").Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		got, err := cs.CoreV1().ConfigMaps("kube-public").Get(ctx, "cluster-info", metav1.GetOptions{})
		if err == nil && got.Data["jws-kubeconfig-abcdef"] != "" {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("bootstrapsigner never signed cluster-info: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
