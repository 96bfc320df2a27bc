package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/internal/simcluster"
	"github.com/onekube/onekube/agent/internal/standin/env"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegatesim"
)

// bins are built once per test process (the agent links kubeadm's types,
// so a cold build is the slow part of this package).
var bins simcluster.Binaries

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "onekube-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if bins, err = simcluster.Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fastArgs keep waits short: the backoff shape is production's, scaled.
var fastArgs = []string{"--poll-interval", "50ms", "--max-poll-interval", "300ms", "--onegate-timeout", "20s",
	"--init-estimate", "500ms", "--close-poll", "100ms", "--start-spread", "200ms"}

func startCluster(t *testing.T, o simcluster.Options) *simcluster.Cluster {
	t.Helper()
	o.Dir = t.TempDir()
	o.Bins = bins
	o.CNIManifest = simcluster.FlannelManifest
	o.Args = append(append([]string{}, fastArgs...), o.Args...)
	c, err := simcluster.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func wait(t *testing.T, c *simcluster.Cluster, n int) []*simcluster.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	runs, err := c.Wait(ctx, n)
	if err != nil {
		dump(t, runs)
		t.Fatal(err)
	}
	return runs
}

func dump(t *testing.T, runs []*simcluster.Run) {
	t.Helper()
	for _, r := range runs {
		t.Logf("VM %d (%s) exit %d:\n%s", r.VM.ID, r.VM.Role, r.Code, r.Output())
	}
}

func standinLog(t *testing.T, c *simcluster.Cluster) []env.Entry {
	t.Helper()
	entries, err := env.ReadLog(c.StandinLog)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return entries
}

func byCommand(entries []env.Entry, binary, cmd string) []env.Entry {
	var out []env.Entry
	for _, e := range entries {
		if e.Binary == binary && e.Command == cmd {
			out = append(out, e)
		}
	}
	return out
}

// assertNoSecrets scans every process's output for every token: the join
// token and each VM's OneGate token.
func assertNoSecrets(t *testing.T, c *simcluster.Cluster, runs []*simcluster.Run, extra ...string) {
	t.Helper()
	secrets := append([]string{}, extra...)
	for _, vm := range c.Sim.VMs() {
		secrets = append(secrets, vm.Token.Reveal())
	}
	for _, r := range runs {
		for _, s := range secrets {
			if s != "" && strings.Contains(r.Output(), s) {
				t.Errorf("VM %d's output contains a token", r.VM.ID)
			}
		}
	}
}

// TestWorkersFirst is the main scenario: every VM boots at once
// (deployment none) and the master's agent starts last, so the workers must
// wait for it; then everything is checked against what the stand-ins saw.
func TestWorkersFirst(t *testing.T) {
	const workers = 3
	c := startCluster(t, simcluster.Options{
		Workers:    workers,
		Deployment: "none",
		Delay: func(vm onegatesim.VMInfo) time.Duration {
			if vm.Role == "master" {
				return 700 * time.Millisecond
			}
			return 0
		},
	})
	runs := wait(t, c, 1+workers)
	var master *simcluster.Run
	for _, r := range runs {
		if r.Code != 0 || r.Err != nil {
			dump(t, runs)
			t.Fatalf("VM %d exited %d (%v)", r.VM.ID, r.Code, r.Err)
		}
		if r.VM.Role == "master" {
			master = r
		}
	}
	for _, r := range runs {
		if r != master && !r.Start.Before(master.Start) {
			t.Errorf("worker %d started after the master", r.VM.ID)
		}
	}

	pub := c.Sim.UserTemplate(master.VM.ID)
	entries := standinLog(t, c)
	inits := byCommand(entries, "kubeadm", "init")
	if len(inits) != 1 {
		t.Fatalf("kubeadm init ran %d times, want 1", len(inits))
	}
	in := inits[0]
	if in.Token == "" || pub[vmcontext.KeyPubToken] != in.Token {
		t.Errorf("published token differs from the init config's")
	}
	if pub[vmcontext.KeyPubHash] != in.Hash || len(in.Hash) != 64 {
		t.Errorf("published hash %q, CA the stand-in wrote hashes to %q", pub[vmcontext.KeyPubHash], in.Hash)
	}
	if pub[vmcontext.KeyPubMaster] != master.VM.IP.String() || pub[vmcontext.KeyPubPort] != "6443" {
		t.Errorf("published master %s:%s, want %s:6443", pub[vmcontext.KeyPubMaster], pub[vmcontext.KeyPubPort], master.VM.IP)
	}
	if in.TokenTTL == "" || in.TokenTTL == "0s" {
		t.Errorf("init token TTL %q", in.TokenTTL)
	}

	joins := byCommand(entries, "kubeadm", "join")
	if len(joins) != workers {
		t.Fatalf("%d joins, want %d", len(joins), workers)
	}
	joined := map[string]int{}
	for _, j := range joins {
		joined[j.NodeIP]++
		if j.ExitCode != 0 || j.Token != in.Token || strings.TrimPrefix(j.Hash, "sha256:") != in.Hash ||
			j.Endpoint != vmcontext.LocalBalancer { // through the endpoint, never one master's address (issue 11)
			t.Errorf("join from %s: exit %d, endpoint %s, same token %v, hash %q", j.NodeIP, j.ExitCode, j.Endpoint, j.Token == in.Token, j.Hash)
		}
	}
	for _, r := range runs {
		if r == master {
			continue
		}
		if joined[r.VM.IP.String()] != 1 {
			t.Errorf("worker %d joined %d times", r.VM.ID, joined[r.VM.IP.String()])
		}
	}
	for _, vm := range c.Sim.VMs() {
		if ut := c.Sim.UserTemplate(vm.ID); ut[vmcontext.KeyReady] != "YES" || ut[vmcontext.KeyPubPhase] != "done" {
			t.Errorf("VM %d: READY=%q PHASE=%q", vm.ID, ut[vmcontext.KeyReady], ut[vmcontext.KeyPubPhase])
		}
	}
	// The worker join RBAC from stdin, before the master published (the
	// workers joined with init's token), then the CNI.
	applies := byCommand(entries, "kubectl", "apply")
	if len(applies) != 2 || !slices.Contains(applies[0].Args, "-") ||
		!slices.Contains(applies[0].Objects, "RoleBinding/onekube:worker-join-config") || slices.Contains(applies[1].Args, "-") {
		t.Errorf("kubectl applies %+v, want the worker join RBAC then the CNI", applies)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Sim.WaitServiceRunning(ctx); err != nil {
		t.Errorf("service not RUNNING: %v", err)
	}
	assertNoSecrets(t, c, runs, in.Token)

	// A reboot after success: exit 0, no kubeadm call, nothing published.
	before := len(standinLog(t, c))
	again, err := c.RunAgain(master.VM.ID)
	if err != nil || again.Code != 0 {
		t.Fatalf("second run: exit %d, %v\n%s", again.Code, err, again.Output())
	}
	if after := len(standinLog(t, c)); after != before {
		t.Errorf("second run called the stand-ins %d times", after-before)
	}
	assertNoSecrets(t, c, []*simcluster.Run{again}, in.Token)
}

// TestStraightDeployment is the normal OneFlow order: workers are created
// only once the master reported READY.
func TestStraightDeployment(t *testing.T) {
	c := startCluster(t, simcluster.Options{Workers: 2, Deployment: "straight"})
	runs := wait(t, c, 3)
	for _, r := range runs {
		if r.Code != 0 {
			dump(t, runs)
			t.Fatalf("VM %d exited %d", r.VM.ID, r.Code)
		}
	}
	if n := len(byCommand(standinLog(t, c), "kubeadm", "join")); n != 2 {
		t.Errorf("%d joins, want 2", n)
	}
}

// TestOneGateOutage: OneGate answers 503 to everything for a while; the
// agents ride through and finish.
func TestOneGateOutage(t *testing.T) {
	c := startCluster(t, simcluster.Options{
		Workers:    2,
		Deployment: "none",
		BeforeStart: func(sim *onegatesim.Sim, vm onegatesim.VMInfo) {
			if vm.Role == "master" {
				sim.InjectFault(onegatesim.Fault{Kind: onegatesim.FaultStatus, Status: 503, For: 1500 * time.Millisecond})
			}
		},
		Delay: func(vm onegatesim.VMInfo) time.Duration {
			if vm.Role == "master" {
				return 0
			}
			return 100 * time.Millisecond
		},
	})
	runs := wait(t, c, 3)
	for _, r := range runs {
		if r.Code != 0 {
			dump(t, runs)
			t.Fatalf("VM %d exited %d", r.VM.ID, r.Code)
		}
	}
	faults := 0
	for _, e := range c.Sim.Events() {
		if e.Kind == onegatesim.EventFault {
			faults++
		}
	}
	if faults == 0 {
		t.Error("no request met the outage; the test tested nothing")
	}
}

// TestWrongOneGateToken: a worker whose token OneGate rejects stops at once
// with a clear error and never reports READY.
func TestWrongOneGateToken(t *testing.T) {
	var bad atomic.Int64
	c := startCluster(t, simcluster.Options{
		Workers:    1,
		Deployment: "none",
		BeforeStart: func(sim *onegatesim.Sim, vm onegatesim.VMInfo) {
			if vm.Role != "master" {
				bad.Store(int64(vm.ID))
				sim.SetWrongToken(vm.ID)
			}
		},
	})
	runs := wait(t, c, 2)
	for _, r := range runs {
		switch {
		case int64(r.VM.ID) == bad.Load():
			if r.Code != 1 || !strings.Contains(r.Output(), "OneGate rejected this VM's token") {
				t.Errorf("worker with a wrong token: exit %d\n%s", r.Code, r.Output())
			}
			if r.End.Sub(r.Start) > 10*time.Second {
				t.Errorf("a 401 took %s to give up", r.End.Sub(r.Start))
			}
			if c.Sim.UserTemplate(r.VM.ID)[vmcontext.KeyReady] != "" {
				t.Error("READY reported with a wrong token")
			}
		case r.Code != 0:
			t.Errorf("VM %d exited %d:\n%s", r.VM.ID, r.Code, r.Output())
		}
	}
	assertNoSecrets(t, c, runs)
}

// TestMasterNeverPublishes: without a master, a worker gives up at the
// deadline with an error that says so, and reports the failure.
func TestMasterNeverPublishes(t *testing.T) {
	c := startCluster(t, simcluster.Options{
		Workers:    1,
		Deployment: "none",
		Skip:       func(vm onegatesim.VMInfo) bool { return vm.Role == "master" },
		Args:       []string{"--master-timeout", "2s"},
	})
	runs := wait(t, c, 1)
	r := runs[0]
	if r.Code != 1 || !strings.Contains(r.Output(), "timed out waiting for the master") {
		t.Fatalf("exit %d:\n%s", r.Code, r.Output())
	}
	if d := r.End.Sub(r.Start); d < 2*time.Second || d > 15*time.Second {
		t.Errorf("gave up after %s, want about 2s", d)
	}
	ut := c.Sim.UserTemplate(r.VM.ID)
	if ut[vmcontext.KeyReady] != "" || ut[vmcontext.KeyPubPhase] != "failed" || !strings.Contains(ut[vmcontext.KeyPubError], "timed out") {
		t.Errorf("published READY=%q PHASE=%q ERROR=%q", ut[vmcontext.KeyReady], ut[vmcontext.KeyPubPhase], ut[vmcontext.KeyPubError])
	}
	if n := len(byCommand(standinLog(t, c), "kubeadm", "join")); n != 0 {
		t.Errorf("joined %d times without a master", n)
	}
	if _, err := os.Stat(filepath.Join(c.RootOf(r.VM.ID), "var/lib/onekube/bootstrap.done")); err == nil {
		t.Error("sentinel written after a failure")
	}
}
