package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/internal/simcluster"
	"github.com/onekube/onekube/agent/internal/standin/env"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
	"github.com/onekube/onekube/context/onegatesim"
)

// Scenarios of issue 8 on a test bed where every VM is its own host: the
// image's hostname on every VM, its own root and address, one API server
// whose Nodes every host sees, and stand-ins that fail as kubeadm does.

// nodesOf lists the Node objects of the API server on a VM's host.
func nodesOf(t *testing.T, c *simcluster.Cluster, vmid int) []env.Node {
	t.Helper()
	nodes, err := (&env.APIServer{Root: c.RootOf(vmid)}).Nodes()
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

// standin runs a stand-in binary on a VM's host, as an operator would.
func standin(t *testing.T, c *simcluster.Cluster, vmid int, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bins.StandinDir, args[0]), args[1:]...)
	cmd.Env = append(os.Environ(), env.VarRoot+"="+c.RootOf(vmid), env.VarLog+"="+c.StandinLog, env.VarNet+"="+c.NetDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s on VM %d: %v\n%s", strings.Join(args, " "), vmid, err, out)
	}
}

func mustSucceed(t *testing.T, runs []*simcluster.Run) {
	t.Helper()
	for _, r := range runs {
		if r.Code != 0 || r.Err != nil {
			dump(t, runs)
			t.Fatalf("VM %d exited %d (%v)", r.VM.ID, r.Code, r.Err)
		}
	}
}

// TestUniqueNodeNames: every VM boots with the same image hostname; each
// node is named after its VM ID, its hostname made to agree, and the API
// server holds one Ready Node per VM. An agent trusting the hostname
// would have been refused by the stand-in's kubelet-start check.
func TestUniqueNodeNames(t *testing.T) {
	c := startCluster(t, simcluster.Options{Workers: 3, Deployment: "none"})
	runs := wait(t, c, 4)
	mustSucceed(t, runs)
	seen := map[string]int{}
	var master int
	for _, r := range runs {
		ut := c.Sim.UserTemplate(r.VM.ID)
		want := r.VM.Role + "-" + strconv.Itoa(r.VM.ID)
		if ut[vmcontext.KeyPubNodeName] != want || c.Hostname(r.VM.ID) != want {
			t.Errorf("VM %d: published %q, hostname %q, want %q", r.VM.ID, ut[vmcontext.KeyPubNodeName], c.Hostname(r.VM.ID), want)
		}
		hosts, _ := os.ReadFile(filepath.Join(c.RootOf(r.VM.ID), "etc/hosts"))
		if !strings.Contains(string(hosts), r.VM.IP.String()+"\t"+want+"\t") {
			t.Errorf("VM %d /etc/hosts:\n%s", r.VM.ID, hosts)
		}
		seen[want]++
		if r.VM.Role == "master" {
			master = r.VM.ID
		}
	}
	for _, e := range standinLog(t, c) {
		if e.Binary == "kubeadm" && (e.Command == "init" || e.Command == "join") && e.Hostname != e.NodeName {
			t.Errorf("kubeadm %s ran on host %q as node %q", e.Command, e.Hostname, e.NodeName)
		}
	}
	nodes := nodesOf(t, c, master)
	if len(nodes) != 4 || len(seen) != 4 {
		t.Fatalf("nodes %+v, names %v", nodes, seen)
	}
	for _, n := range nodes {
		if !n.Ready() || seen[n.Name] != 1 {
			t.Errorf("node %+v ready %v", n, n.Ready())
		}
	}
}

// TestRecreatedMaster: `onevm recover --recreate` gives the master a fresh
// disk under the same VM ID and USER_TEMPLATE. Its agent refuses to start
// a second cluster and says how to; with --new-cluster it starts one after
// clearing the old join data.
func TestRecreatedMaster(t *testing.T) {
	c := startCluster(t, simcluster.Options{Workers: 1, Deployment: "straight"})
	mustSucceed(t, wait(t, c, 2))
	master := c.Sim.RoleVMs(c.ServiceID, "master")[0]
	old := c.Sim.UserTemplate(master.ID)
	inits := len(byCommand(standinLog(t, c), "kubeadm", "init"))

	r, err := c.Recreate(master.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Code != 1 || !strings.Contains(r.Output(), "--new-cluster") || !strings.Contains(r.Output(), "recover --recreate") {
		t.Fatalf("recreated master: exit %d\n%s", r.Code, r.Output())
	}
	if n := len(byCommand(standinLog(t, c), "kubeadm", "init")); n != inits {
		t.Errorf("kubeadm init ran on the recreated master")
	}
	ut := c.Sim.UserTemplate(master.ID)
	if ut[vmcontext.KeyPubPhase] != "failed" || !strings.Contains(ut[vmcontext.KeyPubError], "--new-cluster") || ut[vmcontext.KeyPubToken] != old[vmcontext.KeyPubToken] {
		t.Errorf("published PHASE=%q ERROR=%q, old token kept %v", ut[vmcontext.KeyPubPhase], ut[vmcontext.KeyPubError], ut[vmcontext.KeyPubToken] == old[vmcontext.KeyPubToken])
	}

	again, err := c.RunAgain(master.ID, "--new-cluster")
	if err != nil || again.Code != 0 {
		t.Fatalf("--new-cluster: exit %d, %v\n%s", again.Code, err, again.Output())
	}
	ut = c.Sim.UserTemplate(master.ID)
	if ut[vmcontext.KeyReady] != "YES" || ut[vmcontext.KeyPubToken] == old[vmcontext.KeyPubToken] || ut[vmcontext.KeyPubError] != "" {
		t.Errorf("new cluster: READY=%q new token %v ERROR=%q", ut[vmcontext.KeyReady], ut[vmcontext.KeyPubToken] != old[vmcontext.KeyPubToken], ut[vmcontext.KeyPubError])
	}
	assertNoSecrets(t, c, []*simcluster.Run{r, again}, old[vmcontext.KeyPubToken], ut[vmcontext.KeyPubToken])
}

// TestLostStateWithLiveCluster: the master's /var/lib/onekube is deleted,
// emptied or corrupted while its control plane runs with a joined worker.
// A rerun resets nothing and runs no kubeadm command; the cluster stays.
func TestLostStateWithLiveCluster(t *testing.T) {
	c := startCluster(t, simcluster.Options{Workers: 1, Deployment: "straight"})
	mustSucceed(t, wait(t, c, 2))
	master := c.Sim.RoleVMs(c.ServiceID, "master")[0]
	dir := filepath.Join(c.RootOf(master.ID), "var/lib/onekube")
	for name, content := range map[string]string{"deleted": "", "null": "null", "{}": "{}", "corrupt": `{"vers`,
		"emptied": `{"version":2,"vmid":` + strconv.Itoa(master.ID) + `,"role":"init","completed":[]}`} {
		_ = os.Remove(filepath.Join(dir, "bootstrap.done"))
		_ = os.Remove(filepath.Join(dir, "state.json"))
		if content != "" {
			if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		before := len(standinLog(t, c))
		r, err := c.RunAgain(master.ID)
		if err != nil || r.Code != 0 {
			t.Fatalf("%s: exit %d, %v\n%s", name, r.Code, err, r.Output())
		}
		for _, e := range standinLog(t, c)[before:] {
			if e.Command != "version" {
				t.Errorf("%s: the rerun ran kubeadm %s", name, e.Command)
			}
		}
		if nodes := nodesOf(t, c, master.ID); len(nodes) != 2 || !nodes[0].Ready() || !nodes[1].Ready() {
			t.Errorf("%s: nodes %+v", name, nodes)
		}
	}
}

// TestTwoAgentsAtOnce: a manual run while the unit runs stops at once;
// kubeadm init runs once.
func TestTwoAgentsAtOnce(t *testing.T) {
	c := startCluster(t, simcluster.Options{Workers: 0, Deployment: "straight", Env: []string{env.VarDelay + "=3s"}})
	master := c.Sim.RoleVMs(c.ServiceID, "master")[0]
	statePath := filepath.Join(c.RootOf(master.ID), "var/lib/onekube/state.json")
	for deadline := time.Now().Add(30 * time.Second); phaseOf(statePath) != "kubeadm-init"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the master never reached kubeadm-init")
		}
	}
	second, err := c.RunAgain(master.ID)
	if err != nil {
		t.Fatal(err)
	}
	if second.Code != 1 || !strings.Contains(second.Output(), "another onekube-agent is running on this node") || second.End.Sub(second.Start) > 5*time.Second {
		t.Errorf("second agent: exit %d after %s\n%s", second.Code, second.End.Sub(second.Start), second.Output())
	}
	mustSucceed(t, wait(t, c, 1))
	if n := len(byCommand(standinLog(t, c), "kubeadm", "init")); n != 1 {
		t.Errorf("kubeadm init ran %d times", n)
	}
	if ut := c.Sim.UserTemplate(master.ID); ut[vmcontext.KeyReady] != "YES" || ut[vmcontext.KeyPubError] != "" {
		t.Errorf("the second agent disturbed the first's reports: %v", ut)
	}
}

// TestSiblingRewritesMasterKeys: a worker points ONEGATE_K8S_MASTER at
// itself through PUT /vms/<master> (OneGate allows it), each before its
// own agent starts. No worker joins an impostor; they give up naming the
// reason.
func TestSiblingRewritesMasterKeys(t *testing.T) {
	var rewrites, failed atomic.Int32
	c := startCluster(t, simcluster.Options{
		Workers: 2, Deployment: "straight", Args: []string{"--master-timeout", "3s"},
		BeforeStart: func(sim *onegatesim.Sim, vm onegatesim.VMInfo) {
			if vm.Role == "master" {
				return
			}
			rewrites.Add(1)
			cl, err := onegate.New(onegate.Config{Endpoint: sim.Endpoint(), VMID: vm.ID, Token: vm.Token})
			if err == nil {
				m := sim.RoleVMs(vm.ServiceID, "master")[0]
				err = cl.UpdateVMByID(context.Background(), m.ID, onegate.KV{Key: vmcontext.KeyPubMaster, Value: vm.IP.String()})
			}
			if err != nil {
				failed.Add(1)
			}
		},
	})
	runs := wait(t, c, 3)
	if rewrites.Load() != 2 || failed.Load() != 0 {
		t.Fatalf("rewrites %d, failed %d", rewrites.Load(), failed.Load())
	}
	for _, r := range runs {
		if r.VM.Role == "master" {
			continue
		}
		if r.Code != 1 || !strings.Contains(r.Output(), "is not an address of VM") {
			t.Errorf("worker %d: exit %d\n%s", r.VM.ID, r.Code, r.Output())
		}
	}
	if n := len(byCommand(standinLog(t, c), "kubeadm", "join")); n != 0 {
		t.Errorf("%d joins to the impostor", n)
	}
}

// TestRedirectsAreNotFollowed: ONEGATE_ENDPOINT answers with redirects to
// another host. The agents stop; that host never sees a token.
func TestRedirectsAreNotFollowed(t *testing.T) {
	var leaked atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-ONEGATE-TOKEN") != "" || r.ContentLength > 0 {
			leaked.Add(1)
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer elsewhere.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	c := startCluster(t, simcluster.Options{Workers: 1, Deployment: "none", Sim: onegatesim.Options{Endpoint: redirector.URL}})
	for _, r := range wait(t, c, 2) {
		if r.Code != 1 || !strings.Contains(r.Output(), "307 Temporary Redirect") || !strings.Contains(r.Output(), "not followed") {
			t.Errorf("VM %d: exit %d\n%s", r.VM.ID, r.Code, r.Output())
		}
	}
	if leaked.Load() != 0 {
		t.Errorf("%d requests carried a token or body to the redirect target", leaked.Load())
	}
}

// TestHungKubeadmAndFailedMaster: the master's kubeadm hangs; the agent
// kills it at --command-timeout and reports the failure, and the workers,
// all booted at once and waiting, stop as soon as they see it.
func TestHungKubeadmAndFailedMaster(t *testing.T) {
	c := startCluster(t, simcluster.Options{
		Workers: 2, Deployment: "none",
		Env:  []string{env.VarDelay + "=10m"},
		Args: []string{"--command-timeout", "2s", "--master-timeout", "10m"},
	})
	runs := wait(t, c, 3)
	for _, r := range runs {
		took := r.End.Sub(r.Start)
		switch {
		case r.VM.Role == "master":
			ut := c.Sim.UserTemplate(r.VM.ID)
			if r.Code != 1 || ut[vmcontext.KeyPubPhase] != "failed" || !strings.Contains(ut[vmcontext.KeyPubError], "deadline") {
				t.Errorf("master: exit %d, PHASE=%q ERROR=%q", r.Code, ut[vmcontext.KeyPubPhase], ut[vmcontext.KeyPubError])
			}
		case r.Code != 1 || !strings.Contains(r.Output(), "the master failed: VM"):
			t.Errorf("worker %d: exit %d\n%s", r.VM.ID, r.Code, r.Output())
		}
		if took > 40*time.Second {
			t.Errorf("VM %d took %s", r.VM.ID, took)
		}
	}
}

// TestKubeadmReasonReachesOneGate: kubeadm's commonest preflight failure
// (the container runtime is down: crictl's level=fatal msg="..." inside
// kubeadm's [ERROR CRI]) is what ONEGATE_K8S_ERROR says, '=' included.
func TestKubeadmReasonReachesOneGate(t *testing.T) {
	c := startCluster(t, simcluster.Options{Workers: 0, Deployment: "straight", Env: []string{env.VarFail + "=cri"}})
	r := wait(t, c, 1)[0]
	got := c.Sim.UserTemplate(r.VM.ID)[vmcontext.KeyPubError]
	for _, want := range []string{"kubeadm init exited 1: (ERROR CRI): container runtime is not running", "level=fatal msg='validate service connection"} {
		if !strings.Contains(got, want) {
			t.Errorf("ONEGATE_K8S_ERROR = %q, want %q in it", got, want)
		}
	}
	if strings.Contains(got, "--config") || len(got) > 245 {
		t.Errorf("ONEGATE_K8S_ERROR spends its room on the command line or overflows: %q", got)
	}
}

// TestReBootstrapAfterReset: the documented way to bootstrap a node again
// (kubeadm reset, remove the sentinel, start the unit) works on a master:
// the stale join data goes, a new cluster comes.
func TestReBootstrapAfterReset(t *testing.T) {
	c := startCluster(t, simcluster.Options{Workers: 0, Deployment: "straight"})
	mustSucceed(t, wait(t, c, 1))
	master := c.Sim.RoleVMs(c.ServiceID, "master")[0]
	old := c.Sim.UserTemplate(master.ID)[vmcontext.KeyPubToken]
	standin(t, c, master.ID, "kubeadm", "reset", "-f")
	if err := os.Remove(filepath.Join(c.RootOf(master.ID), "var/lib/onekube/bootstrap.done")); err != nil {
		t.Fatal(err)
	}
	r, err := c.RunAgain(master.ID)
	if err != nil || r.Code != 0 {
		t.Fatalf("re-bootstrap: exit %d, %v\n%s", r.Code, err, r.Output())
	}
	ut := c.Sim.UserTemplate(master.ID)
	if ut[vmcontext.KeyReady] != "YES" || ut[vmcontext.KeyPubToken] == old {
		t.Errorf("READY=%q, new token %v", ut[vmcontext.KeyReady], ut[vmcontext.KeyPubToken] != old)
	}
	if n := len(byCommand(standinLog(t, c), "kubeadm", "init")); n != 2 {
		t.Errorf("kubeadm init ran %d times, want 2", n)
	}
	erased := 0
	for _, e := range c.Sim.Events() {
		if e.Kind == onegatesim.EventVMErased && e.VMID == master.ID {
			erased++
		}
	}
	if erased < 4 {
		t.Errorf("%d keys erased before the new init, want READY and the join keys", erased)
	}
}
