//go:build realbed

package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/testbed"
)

// TestAgentServiceFirstJoinsWithoutServe: workers join with kubeadm init's
// own token, whose group (kubeadm.WorkerTokenGroup) kubeadm grants
// nothing. With serve masked, only the initializing master's worker-rbac
// phase can have granted it: every worker's first kubeadm join must read
// kubeadm-config and file its node-client CSR, where it used to get 403 in
// the seconds before serve ran. The CSR waits for serve's approver (the
// worker group has no auto-approval, issue 20): serve starts once a
// worker's CSR is pending, and every join then succeeds.
func TestAgentServiceFirstJoinsWithoutServe(t *testing.T) {
	b := newBed(t)
	s := startServiceWith(t, b, testbed.ServiceOptions{Workers: 2, CNIManifest: flannelManifest, AgentArgs: agentArgs, NoServe: true})
	master := s.Sim.RoleVMs(s.ID, "master")[0]
	if r := waitRun(t, s, master.ID); r.Code != 0 || r.Err != nil {
		t.Fatalf("master: bootstrap exited %d (%v):\n%s", r.Code, r.Err, lastLines(r.Output(), 15))
	}
	cfg, err := b.RESTConfig(s.VM(master.ID), "/etc/kubernetes/admin.conf")
	if err != nil {
		t.Fatal(err)
	}
	admin := kubernetes.NewForConfigOrDie(cfg)
	waitUntil(t, 3*time.Minute, "a worker's node-client CSR without serve", func() bool {
		l, err := admin.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, c := range l.Items {
			if slices.Contains(c.Spec.Groups, kubeadm.WorkerTokenGroup) {
				return true
			}
		}
		return false
	})
	if err := s.StartServe(master.ID); err != nil {
		t.Fatal(err)
	}
	for _, r := range waitAgents(t, s, 3) {
		if r.Code != 0 || r.Err != nil {
			t.Errorf("VM %d (%s): onekube-agent bootstrap exited %d (%v); it said:\n%s", r.VM.ID, r.VM.Role, r.Code, r.Err, lastLines(r.Output(), 15))
		}
	}
}
