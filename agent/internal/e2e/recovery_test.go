package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/internal/simcluster"
	"github.com/onekube/onekube/agent/internal/standin/env"
	vmcontext "github.com/onekube/onekube/context"
)

// TestJoinFailsThenRetries: kubeadm join fails once. The worker reports the
// failure (no READY), and its next run, as systemd's Restart= makes, resets
// the node with `kubeadm reset -f` before joining again, then clears the
// error and reports READY.
func TestJoinFailsThenRetries(t *testing.T) {
	c := startCluster(t, simcluster.Options{
		Workers:    1,
		Deployment: "straight",
		Env:        []string{env.VarFail + "=join:1"},
	})
	runs := wait(t, c, 2)
	var worker *simcluster.Run
	for _, r := range runs {
		switch {
		case r.VM.Role == "master" && r.Code != 0:
			dump(t, runs)
			t.Fatalf("master exited %d", r.Code)
		case r.VM.Role != "master":
			worker = r
		}
	}
	if worker.Code != 1 || !strings.Contains(worker.Output(), "kubeadm-join") {
		dump(t, runs)
		t.Fatalf("worker with a failing join: exit %d", worker.Code)
	}
	ut := c.Sim.UserTemplate(worker.VM.ID)
	if ut[vmcontext.KeyReady] != "" || ut[vmcontext.KeyPubPhase] != "failed" || !strings.Contains(ut[vmcontext.KeyPubError], "kubeadm-join") {
		t.Errorf("after the failure: READY=%q PHASE=%q ERROR=%q", ut[vmcontext.KeyReady], ut[vmcontext.KeyPubPhase], ut[vmcontext.KeyPubError])
	}

	again, err := c.RunAgain(worker.VM.ID)
	if err != nil || again.Code != 0 {
		t.Fatalf("rerun: exit %d, %v\n%s", again.Code, err, again.Output())
	}
	var seq []string
	for _, e := range standinLog(t, c) {
		if e.Binary == "kubeadm" && e.NodeIP == worker.VM.IP.String() || e.Command == "reset" {
			seq = append(seq, e.Command)
		}
	}
	// The failed join, then reset, then the join that works; no reset
	// before the first join and nothing else on this node.
	if got := strings.Join(seq, " "); got != "join reset join" {
		t.Errorf("kubeadm calls on the worker: %q, want %q", got, "join reset join")
	}
	ut = c.Sim.UserTemplate(worker.VM.ID)
	if ut[vmcontext.KeyReady] != "YES" || ut[vmcontext.KeyPubPhase] != "done" || ut[vmcontext.KeyPubError] != "" {
		t.Errorf("after the rerun: READY=%q PHASE=%q ERROR=%q", ut[vmcontext.KeyReady], ut[vmcontext.KeyPubPhase], ut[vmcontext.KeyPubError])
	}
	assertNoSecrets(t, c, append(runs, again), c.Sim.UserTemplate(runs[0].VM.ID)[vmcontext.KeyPubToken])
}

// TestMasterCrashDuringInit: the master loses power (SIGKILL to the agent
// and kubeadm) while kubeadm init runs. Nothing is published and OneFlow
// holds the workers back. On the next boot the agent resets the half-done
// node, initializes with the token it had already saved, publishes, and the
// workers, created only then, join with exactly that token and CA hash.
func TestMasterCrashDuringInit(t *testing.T) {
	c := startCluster(t, simcluster.Options{
		Workers:    2,
		Deployment: "straight",
		// Long enough to be killed inside; the rerun below overrides it.
		Env: []string{env.VarDelay + "=30s"},
	})
	master := c.Sim.RoleVMs(c.ServiceID, "master")[0]
	statePath := filepath.Join(c.RootOf(master.ID), "var/lib/onekube/state.json")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for phaseOf(statePath) != "kubeadm-init" {
		if ctx.Err() != nil {
			dump(t, c.Runs())
			t.Fatal("the master never reached kubeadm-init")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // let the agent start kubeadm
	if err := c.Kill(master.ID); err != nil {
		t.Fatal(err)
	}
	first := wait(t, c, 1)[0]
	if first.Code != -1 {
		t.Fatalf("killed master: exit %d, want -1 (killed)\n%s", first.Code, first.Output())
	}
	if ut := c.Sim.UserTemplate(master.ID); ut[vmcontext.KeyReady] != "" || ut[vmcontext.KeyPubToken] != "" {
		t.Fatalf("a crashed master published READY=%q token set %v", ut[vmcontext.KeyReady], ut[vmcontext.KeyPubToken] != "")
	}
	if n := len(c.Sim.RoleVMs(c.ServiceID, "worker")); n != 0 {
		t.Fatalf("%d workers created before the master was READY", n)
	}

	c.SetEnv(env.VarDelay + "=0s") // the reboot: kubeadm runs at normal speed
	again, err := c.RunAgain(master.ID)
	if err != nil || again.Code != 0 {
		t.Fatalf("rerun: exit %d, %v\n%s", again.Code, err, again.Output())
	}
	runs := wait(t, c, 3)
	for _, r := range runs {
		if r.VM.Role != "master" && r.Code != 0 {
			dump(t, runs)
			t.Fatalf("worker %d exited %d", r.VM.ID, r.Code)
		}
	}

	entries := standinLog(t, c)
	inits := byCommand(entries, "kubeadm", "init")
	resets := byCommand(entries, "kubeadm", "reset")
	if len(inits) != 1 || inits[0].ExitCode != 0 {
		t.Fatalf("completed kubeadm init runs: %d, want 1 (the killed one never finished)", len(inits))
	}
	if len(resets) != 1 || resets[0].Time > inits[0].Time {
		t.Errorf("kubeadm reset runs: %d, want 1 before the second init", len(resets))
	}
	pub := c.Sim.UserTemplate(master.ID)
	if pub[vmcontext.KeyPubToken] != inits[0].Token || pub[vmcontext.KeyPubHash] != inits[0].Hash || pub[vmcontext.KeyReady] != "YES" {
		t.Errorf("published data differs from the init that completed")
	}
	joins := byCommand(entries, "kubeadm", "join")
	if len(joins) != 2 {
		t.Fatalf("%d joins, want 2", len(joins))
	}
	for _, j := range joins {
		if j.ExitCode != 0 || j.Token != inits[0].Token || j.Hash != inits[0].Hash {
			t.Errorf("join from %s: exit %d, same token %v, same hash %v", j.NodeIP, j.ExitCode, j.Token == inits[0].Token, j.Hash == inits[0].Hash)
		}
	}
	if err := c.Sim.WaitServiceRunning(ctx); err != nil {
		t.Errorf("service: %v", err)
	}
	assertNoSecrets(t, c, append(runs, first, again), inits[0].Token)
}

// phaseOf reads the phase an agent's state file records, or "".
func phaseOf(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var st struct {
		Phase string `json:"phase"`
	}
	if json.Unmarshal(b, &st) != nil {
		return ""
	}
	return st.Phase
}
