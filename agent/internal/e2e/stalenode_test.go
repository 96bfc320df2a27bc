package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/internal/simcluster"
	"github.com/onekube/onekube/agent/internal/standin/env"
	vmcontext "github.com/onekube/onekube/context"
)

// A worker's own Node outlives its kubelet: it stays Ready for the node
// monitor grace period, and kubeadm refuses to join under its name until
// then. The real bed showed it (agent/testbed/e2e, TestAgentRealCloud's
// worker re-bootstrap); the stand-in now does the same, with the grace cut
// to 8 s here: the agent's first join after its reset must still see the
// Node Ready, which a loaded CI machine (make test beside the real bed)
// once delayed past a 3 s grace; the agent's 5 s retries then see it go
// NotReady on the second or third attempt.
var staleGrace = env.VarNodeGrace + "=8s"

// staleJoins checks the worker's kubeadm calls since the given log entry:
// first (a reset of the agent's own unfinished attempt, or nothing), then a
// join refused under its own Ready Node, a reset, and a join that works.
func staleJoins(t *testing.T, c *simcluster.Cluster, since int, name, first string) {
	t.Helper()
	var seq []string
	refused := false
	for _, e := range standinLog(t, c)[since:] {
		if e.Binary != "kubeadm" || e.Command == "version" {
			continue
		}
		seq = append(seq, e.Command)
		if e.Command == "join" && e.ExitCode == 1 && strings.Contains(e.Error, `a Node with name "`+name+`" and status "Ready" already exists`) {
			refused = true
		}
	}
	t.Logf("kubeadm calls: %s", strings.Join(seq, " "))
	if got := strings.Join(seq, " "); !refused || !strings.HasPrefix(got, first+"join reset join") || !strings.HasSuffix(got, "reset join") {
		t.Errorf("kubeadm calls %q (a refused join: %v), want %sjoin, reset, join...", got, refused, first)
	}
}

// TestWorkerReBootstrapWaitsOutItsNode: the README's re-bootstrap on a
// worker (kubeadm reset -f, remove the sentinel, start the unit).
func TestWorkerReBootstrapWaitsOutItsNode(t *testing.T) {
	c := startCluster(t, simcluster.Options{Workers: 1, Deployment: "straight", Env: []string{staleGrace}})
	mustSucceed(t, wait(t, c, 2))
	w := c.Sim.RoleVMs(c.ServiceID, "worker")[0]
	name := c.Sim.UserTemplate(w.ID)[vmcontext.KeyPubNodeName]
	standin(t, c, w.ID, "kubeadm", "reset", "-f")
	if err := os.Remove(filepath.Join(c.RootOf(w.ID), "var/lib/onekube/bootstrap.done")); err != nil {
		t.Fatal(err)
	}
	before := len(standinLog(t, c))
	r, err := c.RunAgain(w.ID)
	if err != nil || r.Code != 0 || !strings.Contains(r.Output(), "Waiting, then joining again") {
		t.Fatalf("re-bootstrap: exit %d, %v\n%s", r.Code, err, r.Output())
	}
	staleJoins(t, c, before, name, "")
	master := c.Sim.RoleVMs(c.ServiceID, "master")[0]
	for _, n := range nodesOf(t, c, master.ID) {
		if !n.Ready() || n.Name == name && n.Host != c.RootOf(w.ID) {
			t.Errorf("node %+v", n)
		}
	}
	if ut := c.Sim.UserTemplate(w.ID); ut[vmcontext.KeyReady] != "YES" || ut[vmcontext.KeyPubError] != "" {
		t.Errorf("READY=%q ERROR=%q", ut[vmcontext.KeyReady], ut[vmcontext.KeyPubError])
	}
}

// TestRecreatedWorkerWaitsOutItsNode: `onevm recover --recreate` of a
// worker: the old host's kubelet died with it a moment ago, so its Node is
// still Ready; the fresh disk clears the stale READY, waits, and joins
// under the same name.
func TestRecreatedWorkerWaitsOutItsNode(t *testing.T) {
	c := startCluster(t, simcluster.Options{Workers: 1, Deployment: "straight", Env: []string{staleGrace}})
	mustSucceed(t, wait(t, c, 2))
	w := c.Sim.RoleVMs(c.ServiceID, "worker")[0]
	name := c.Sim.UserTemplate(w.ID)[vmcontext.KeyPubNodeName]
	before := len(standinLog(t, c))
	r, err := c.Recreate(w.ID)
	if err != nil || r.Code != 0 {
		t.Fatalf("recreated worker: exit %d, %v\n%s", r.Code, err, r.Output())
	}
	staleJoins(t, c, before, name, "")
	if ut := c.Sim.UserTemplate(w.ID); ut[vmcontext.KeyReady] != "YES" || ut[vmcontext.KeyPubNodeName] != name {
		t.Errorf("READY=%q name %q", ut[vmcontext.KeyReady], ut[vmcontext.KeyPubNodeName])
	}
}

// TestWorkerCrashDuringJoin: the worker loses power while kubeadm join
// waits for the kubelet's TLS bootstrap. The kubelet, a service of its own,
// registers the Node anyway; the next run resets the unfinished attempt,
// is refused under its own (now stale) Node, waits, and joins. The real
// bed does the same with the real kubeadm (TestAgentRealCloud).
func TestWorkerCrashDuringJoin(t *testing.T) {
	c := startCluster(t, simcluster.Options{Workers: 0, Deployment: "straight", Env: []string{staleGrace}})
	mustSucceed(t, wait(t, c, 1))
	c.SetEnv(env.VarDelay + "=30s")
	if err := c.Sim.Scale(c.ServiceID, "worker", 1); err != nil {
		t.Fatal(err)
	}
	var w int
	kubelet := ""
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if ws := c.Sim.RoleVMs(c.ServiceID, "worker"); len(ws) > 0 {
			w = ws[0].ID
			kubelet = filepath.Join(c.RootOf(w), "var/lib/onekube-standin/kubelet")
			if _, err := os.Stat(kubelet); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			dump(t, c.Runs())
			t.Fatal("the worker's kubelet never started")
		}
	}
	if err := c.Kill(w); err != nil {
		t.Fatal(err)
	}
	name := "worker-" + strconv.Itoa(w)
	if ut := c.Sim.UserTemplate(w); ut[vmcontext.KeyReady] == "YES" {
		t.Fatal("READY=YES from a killed join")
	}
	c.SetEnv(env.VarDelay + "=0s")
	before := len(standinLog(t, c))
	r, err := c.RunAgain(w)
	if err != nil || r.Code != 0 {
		t.Fatalf("rerun: exit %d, %v\n%s", r.Code, err, r.Output())
	}
	staleJoins(t, c, before, name, "reset ")
	if ut := c.Sim.UserTemplate(w); ut[vmcontext.KeyReady] != "YES" || ut[vmcontext.KeyPubNodeName] != name {
		t.Errorf("READY=%q name %q", ut[vmcontext.KeyReady], ut[vmcontext.KeyPubNodeName])
	}
}
