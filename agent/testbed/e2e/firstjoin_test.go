//go:build realbed

package e2e

import (
	"testing"

	"github.com/onekube/onekube/agent/testbed"
)

// TestAgentServiceFirstJoinsWithoutServe: workers join with kubeadm init's
// own token, whose group (kubeadm.WorkerTokenGroup) kubeadm grants
// nothing. With serve masked, only the initializing master's worker-rbac
// phase can have granted it: every worker's first kubeadm join must read
// kubeadm-config and succeed, where it used to get 403 in the seconds
// before serve ran.
func TestAgentServiceFirstJoinsWithoutServe(t *testing.T) {
	b := newBed(t)
	s := startServiceWith(t, b, testbed.ServiceOptions{Workers: 2, CNIManifest: flannelManifest, AgentArgs: agentArgs, NoServe: true})
	for _, r := range waitAgents(t, s, 3) {
		if r.Code != 0 || r.Err != nil {
			t.Errorf("VM %d (%s): onekube-agent bootstrap exited %d (%v); it said:\n%s", r.VM.ID, r.VM.Role, r.Code, r.Err, lastLines(r.Output(), 15))
		}
	}
}
