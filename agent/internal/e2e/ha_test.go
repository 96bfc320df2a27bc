package e2e

import (
	"context"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/etcdm"
	"github.com/onekube/onekube/agent/internal/simcluster"
	"github.com/onekube/onekube/agent/internal/standin/env"
	"github.com/onekube/onekube/agent/testbed/loopback"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegatesim"
)

// HA scenarios of issue 11 in the simulator: every master and worker its
// own host, the stand-in enforcing kubeadm's control-plane join rules, a
// real API server for serve's lease and tokens, and a real etcd holding
// the membership the stand-in adds and the agent removes.

func startHA(t *testing.T, masters, workers int, o simcluster.Options) *simcluster.Cluster {
	c, _ := startHAEtcd(t, masters, workers, o)
	return c
}

func startHAEtcd(t *testing.T, masters, workers int, o simcluster.Options) (*simcluster.Cluster, string) {
	t.Helper()
	srv := loopback.Start(t, loopback.Options{})
	url, stop, err := simcluster.StartEtcd(t.TempDir())
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	t.Cleanup(stop)
	o.Masters, o.Workers = masters, workers
	if o.Deployment == "" {
		o.Deployment = "none"
	}
	o.ControlPlane = &simcluster.ControlPlane{Kubeconfig: srv.Kubeconfig, EtcdURL: url}
	return startCluster(t, o), url
}

// memberIDs maps peer IPs to etcd member IDs, read with the agent's own
// etcd client.
func memberIDs(t *testing.T, url string) map[string]uint64 {
	t.Helper()
	ec, err := etcdm.New(etcdm.Config{Endpoints: []string{url}})
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close()
	ms, err := ec.Members(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, m := range ms {
		out[m.PeerIP().String()] = m.ID
	}
	return out
}

// reverseOrder starts the highest VM ID first, the init master last.
func reverseOrder(vm onegatesim.VMInfo) time.Duration {
	return time.Duration(100-vm.ID%100) * 15 * time.Millisecond
}

func dumpAll(t *testing.T, c *simcluster.Cluster, runs []*simcluster.Run) {
	t.Helper()
	dump(t, runs)
	for id, s := range c.Serves() {
		t.Logf("serve on VM %d:\n%s", id, s.Output())
	}
}

// waitFor polls cond for up to d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkHA checks a finished HA cluster: one init by the lowest master,
// every other master joined as a control plane through the endpoint, in
// VM-ID order, every worker through the endpoint; every VM READY; no
// certificate key grant or recipient left in OneGate; one etcd member per
// master. It returns the masters, lowest first.
func checkHA(t *testing.T, c *simcluster.Cluster, runs []*simcluster.Run) []onegatesim.VMInfo {
	t.Helper()
	masters := c.Sim.RoleVMs(c.ServiceID, "master")
	sort.Slice(masters, func(i, j int) bool { return masters[i].ID < masters[j].ID })
	entries := standinLog(t, c)
	inits := byCommand(entries, "kubeadm", "init")
	if len(inits) != 1 || inits[0].NodeIP != masters[0].IP.String() {
		dumpAll(t, c, runs)
		t.Fatalf("kubeadm init ran %d times (want once, on the lowest master %s)", len(inits), masters[0].IP)
	}
	if inits[0].ControlPlaneEndpoint != vmcontext.LocalBalancer || !inits[0].Uploaded {
		t.Errorf("init: endpoint %q, certificates uploaded %v", inits[0].ControlPlaneEndpoint, inits[0].Uploaded)
	}
	var cpOrder []string
	for _, j := range byCommand(entries, "kubeadm", "join") {
		if j.ExitCode != 0 {
			continue
		}
		if j.Endpoint != vmcontext.LocalBalancer {
			t.Errorf("join from %s went to %s, not the endpoint", j.NodeIP, j.Endpoint)
		}
		if j.ControlPlane {
			cpOrder = append(cpOrder, j.NodeIP)
		}
	}
	var want []string
	for _, m := range masters[1:] {
		want = append(want, m.IP.String())
	}
	if strings.Join(cpOrder, " ") != strings.Join(want, " ") {
		t.Errorf("control planes joined in the order %v, want VM-ID order %v", cpOrder, want)
	}
	for _, vm := range c.Sim.VMs() {
		ut := c.Sim.UserTemplate(vm.ID)
		if ut[vmcontext.KeyReady] != "YES" {
			t.Errorf("VM %d not READY: %v", vm.ID, ut)
		}
	}
	for i, m := range masters {
		ut := c.Sim.UserTemplate(m.ID)
		kind := "control-plane"
		if i == 0 {
			kind = "init"
		}
		if ut[vmcontext.KeyPubKind] != kind || ut[vmcontext.KeyPubEndpoint] != vmcontext.LocalBalancer {
			t.Errorf("master %d published kind %q endpoint %q", m.ID, ut[vmcontext.KeyPubKind], ut[vmcontext.KeyPubEndpoint])
		}
	}
	waitFor(t, 15*time.Second, "every grant and recipient withdrawn", func() bool {
		for _, m := range masters {
			ut := c.Sim.UserTemplate(m.ID)
			if ut[vmcontext.KeyPubCertKey] != "" || ut[vmcontext.KeyPubRecipient] != "" {
				return false
			}
		}
		return true
	})
	waitFor(t, 15*time.Second, "the etcd members of every master published", func() bool {
		return etcdHasEach(c.EtcdMembers(), masters)
	})
	return masters
}

// etcdHasEach: exactly one member per master address.
func etcdHasEach(summary string, masters []onegatesim.VMInfo) bool {
	for _, m := range masters {
		if strings.Count(" "+summary+" ", "@"+m.IP.String()+" ") != 1 {
			return false
		}
	}
	return true
}

// mastersReady is the time from the last master's agent start to the last
// master's READY (its bootstrap's exit): the figure of issue 11.
func mastersReady(runs []*simcluster.Run) time.Duration {
	var booted, ready time.Time
	for _, r := range runs {
		if r.VM.Role != "master" {
			continue
		}
		if r.Start.After(booted) {
			booted = r.Start
		}
		if r.End.After(ready) {
			ready = r.End
		}
	}
	return ready.Sub(booted)
}

func haCluster(t *testing.T, masters, workers int) {
	c := startHA(t, masters, workers, simcluster.Options{Delay: reverseOrder})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	runs, err := c.Wait(ctx, masters+workers)
	if err != nil {
		dumpAll(t, c, runs)
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Code != 0 || r.Err != nil {
			dumpAll(t, c, runs)
			t.Fatalf("VM %d (%s) exited %d (%v)", r.VM.ID, r.VM.Role, r.Code, r.Err)
		}
	}
	checkHA(t, c, runs)
	t.Logf("figure: %d masters booted (highest ID first) to all READY: %s", masters, mastersReady(runs).Round(10*time.Millisecond))
	if err := c.Sim.WaitServiceRunning(ctx); err != nil {
		t.Errorf("service not RUNNING: %v", err)
	}
	var tokens []string
	for _, e := range standinLog(t, c) {
		if e.Token != "" {
			tokens = append(tokens, e.Token)
		}
	}
	assertNoSecrets(t, c, runs, tokens...)
}

// TestHAThreeMasters: 3 masters and 2 workers created at once, started
// highest ID first.
func TestHAThreeMasters(t *testing.T) { haCluster(t, 3, 2) }

// TestHAFiveMasters: the same with 5 masters.
func TestHAFiveMasters(t *testing.T) { haCluster(t, 5, 1) }

// TestHAMasterKilledMidJoin: the second master loses power during its
// kubeadm join. The third waits for it (it is neither READY nor failed);
// the rerun resets the node, asks again with a new recipient, gets a new
// grant and joins; then the third joins.
func TestHAMasterKilledMidJoin(t *testing.T) {
	c := startHA(t, 3, 1, simcluster.Options{Env: []string{env.VarDelay + "=2s"}})
	masters := c.Sim.RoleVMs(c.ServiceID, "master")
	sort.Slice(masters, func(i, j int) bool { return masters[i].ID < masters[j].ID })
	second := masters[1]
	statePath := c.RootOf(second.ID) + "/var/lib/onekube/state.json"
	waitFor(t, time.Minute, "the second master in kubeadm-join", func() bool { return phaseOf(statePath) == "kubeadm-join" })
	time.Sleep(300 * time.Millisecond) // kubeadm runs
	if err := c.Kill(second.ID); err != nil {
		t.Fatal(err)
	}
	c.SetEnv(env.VarDelay + "=0s")
	// The third master must not join while the second is down.
	time.Sleep(3 * time.Second)
	for _, j := range byCommand(standinLog(t, c), "kubeadm", "join") {
		if j.NodeIP == masters[2].IP.String() {
			t.Fatal("the third master joined while the second was half-joined")
		}
	}
	again, err := c.RunAgain(second.ID)
	if err != nil || again.Code != 0 {
		dumpAll(t, c, c.Runs())
		t.Fatalf("rerun: exit %d, %v\n%s", again.Code, err, again.Output())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runs, err := c.Wait(ctx, 4)
	if err != nil {
		dumpAll(t, c, runs)
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.VM.ID != second.ID && r.Code != 0 {
			dumpAll(t, c, runs)
			t.Fatalf("VM %d exited %d", r.VM.ID, r.Code)
		}
	}
	var seq []string
	for _, e := range standinLog(t, c) {
		if e.Binary == "kubeadm" && (e.NodeIP == second.IP.String() || e.Command == "reset") {
			seq = append(seq, e.Command)
		}
	}
	// The killed join left its kubelet's Node Ready; kubeadm refuses a
	// join under that name until node-monitor-grace-period passes, so the
	// agent may reset and retry a few times: always a reset before each
	// join, never a join without one.
	got := strings.Join(seq, " ")
	if !regexp.MustCompile(`^(reset join)( reset join)*$`).MatchString(got) {
		t.Errorf("kubeadm on the second master after the kill: %q, want each join after a reset", got)
	}
	checkHA(t, c, append(runs, again))
}

// TestHAInitMasterRecreated: after all joined, the initialiser is
// recreated (same VM ID, fresh disk). It sees its siblings' cluster and
// rejoins as a control plane: another master takes over serve, removes its
// stale etcd member, grants it the key; no second kubeadm init.
func TestHAInitMasterRecreated(t *testing.T) {
	c, etcdURL := startHAEtcd(t, 3, 1, simcluster.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	runs, err := c.Wait(ctx, 4)
	if err != nil {
		dumpAll(t, c, runs)
		t.Fatal(err)
	}
	masters := checkHA(t, c, runs)
	first := masters[0]
	before := c.EtcdMembers()
	oldID := memberIDs(t, etcdURL)[first.IP.String()]
	start := time.Now()
	again, err := c.Recreate(first.ID)
	if err != nil || again.Code != 0 {
		dumpAll(t, c, c.Runs())
		t.Fatalf("recreated initialiser: exit %d, %v\n%s", again.Code, err, again.Output())
	}
	t.Logf("the recreated initialiser rejoined in %s (serve's lease moved to another master first)", time.Since(start).Round(100*time.Millisecond))
	entries := standinLog(t, c)
	if n := len(byCommand(entries, "kubeadm", "init")); n != 1 {
		t.Errorf("kubeadm init ran %d times", n)
	}
	var rejoined bool
	for _, j := range byCommand(entries, "kubeadm", "join") {
		if j.NodeIP == first.IP.String() && j.ControlPlane && j.ExitCode == 0 {
			rejoined = true
		}
	}
	if !rejoined {
		t.Error("the recreated initialiser did not join as a control plane")
	}
	ut := c.Sim.UserTemplate(first.ID)
	if ut[vmcontext.KeyReady] != "YES" || ut[vmcontext.KeyPubKind] != "control-plane" || ut[vmcontext.KeyPubToken] != "" {
		t.Errorf("after rejoining: READY %q kind %q token published %v", ut[vmcontext.KeyReady], ut[vmcontext.KeyPubKind], ut[vmcontext.KeyPubToken] != "")
	}
	// The stand-in refuses a join that meets a member with its own peer
	// URL; the join succeeded, and the member is a new one: the acting
	// master removed the stale member first.
	ids := memberIDs(t, etcdURL)
	if newID, ok := ids[first.IP.String()]; !ok || newID == oldID || len(ids) != len(masters)+1 {
		t.Errorf("etcd members %v: want one new member for %s (the old was %x), one per master plus the simulation's voter", ids, first.IP, oldID)
	}
	waitFor(t, 30*time.Second, "one etcd member per master published", func() bool { return etcdHasEach(c.EtcdMembers(), masters) })
	t.Logf("etcd members before %q, after %q", before, c.EtcdMembers())
}
