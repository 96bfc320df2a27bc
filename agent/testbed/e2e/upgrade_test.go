//go:build realbed

package e2e

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// upgradeFrom is the release the bed's upgrade clusters start at
// (TestUpgrade, upgradeflow_test.go, which replaced TestBedUpgrade: the
// same kubeadm steps, run by the real executor).
const upgradeFrom = "v1.36.3"

// waitKubelets waits until each node's kubelet reports version.
func waitKubelets(t *testing.T, c kubernetes.Interface, version string, names ...string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var wrong []string
		for _, n := range names {
			node, err := c.CoreV1().Nodes().Get(context.Background(), n, metav1.GetOptions{})
			if err != nil || node.Status.NodeInfo.KubeletVersion != version {
				got := "?"
				if err == nil {
					got = node.Status.NodeInfo.KubeletVersion
				}
				wrong = append(wrong, n+"="+got)
			}
		}
		if len(wrong) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubelets not at %s: %v", version, wrong)
		}
		time.Sleep(time.Second)
	}
}
