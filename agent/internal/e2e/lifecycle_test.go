package e2e

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"

	"github.com/onekube/onekube/agent/internal/simcluster"
	"github.com/onekube/onekube/agent/internal/standin/env"
	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/serve"
	"github.com/onekube/onekube/agent/testbed/loopback"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegatesim"
)

// liveServeArgs shorten serve's ticks (the defaults are measured in
// agent/serve): the loops are the production ones.
var liveServeArgs = []string{"--tokens-fast", "300ms", "--tokens-idle", "1s", "--publish-every", "300ms", "--cleanup-every", "1s"}

// TestLivingCluster is a cluster's life on the simulator, with a real API
// server behind the stand-ins and a virtual clock: deploy, every token
// gone once nobody waits, a week later (every token long expired) the
// workers scaled up by 2 that both join with a fresh token, scaled down by
// 1 (the oldest worker drains itself and deletes its Node before its VM is
// destroyed), and one terminated hard (its Node deleted by the acting
// master after the grace period).
func TestLivingCluster(t *testing.T) {
	api := loopback.Start(t, loopback.Options{ControllerManager: true})
	cs := api.Client(t)
	c := startCluster(t, simcluster.Options{
		Workers:    2,
		MaxWorkers: 4,
		Living:     &simcluster.Living{KubeDir: api.Dir, ServeArgs: liveServeArgs},
		// The role cooldown runs on the wall clock: shortened, not virtual.
		Sim: onegatesim.Options{Cooldown: time.Second},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	svc := c.ServiceID
	if err := c.Sim.WaitServiceRunning(ctx); err != nil {
		dump(t, c.Runs())
		t.Fatal(err)
	}
	master := c.Sim.RoleVMs(svc, "master")[0].ID
	initTok := tokenIDs(t, standinLog(t, c), "init")
	until(t, ctx, "every token gone once nobody waits", func() bool {
		return len(ownedTokens(t, cs)) == 0 && c.Sim.UserTemplate(master)[vmcontext.KeyPubToken] == ""
	}, c)
	for _, vm := range c.Sim.VMs() {
		if n := nodeOf(t, cs, vm.ID); n == "" {
			t.Fatalf("VM %d has no Node", vm.ID)
		}
	}

	// A week later: the init token (1 h) is long expired by every clock
	// the cluster has, and no other token exists.
	if err := c.Advance(7 * 24 * time.Hour); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := c.Sim.Scale(svc, "worker", 4); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, "a token published for the new workers", func() bool {
		return c.Sim.UserTemplate(master)[vmcontext.KeyPubToken] != ""
	}, c)
	t.Logf("scale-up: a token was published %s after the VMs were created", time.Since(start).Round(time.Millisecond))
	exp, err := time.Parse(time.RFC3339, c.Sim.UserTemplate(master)[vmcontext.KeyPubTokenExpires])
	if err != nil || exp.Sub(c.Now()) < 50*time.Minute || exp.Sub(c.Now()) > time.Hour {
		t.Errorf("published expiry %v (%v), virtual now %s", exp, err, c.Now())
	}
	workers := c.Sim.RoleVMs(svc, "worker")
	newIDs := []int{workers[2].ID, workers[3].ID}
	until(t, ctx, "both new workers READY with a Node", func() bool {
		return c.Sim.ServiceState(svc) == "RUNNING" && nodeOf(t, cs, newIDs[0]) != "" && nodeOf(t, cs, newIDs[1]) != ""
	}, c)
	for _, id := range newIDs {
		st := c.Sim.Stats(id)
		t.Logf("scale-up: worker %d made %d OneGate requests to join (%v)", id, st.Total, st.Requests)
	}
	joins := tokenIDs(t, standinLog(t, c), "join")
	if len(joins) != 4 || slices.Contains(joins[2:], initTok[0]) {
		// Counts and positions only: a token ID is half a token.
		t.Errorf("%d joins, init's token reused by a new worker %v: the new workers must join with a fresh token",
			len(joins), len(joins) > 2 && slices.Contains(joins[2:], initTok[0]))
	}
	// Once they joined the token is erased from OneGate at once, and its
	// Secret deleted after the retire grace (a worker that read it a
	// moment before the erase still finishes its join).
	until(t, ctx, "the token erased once the new workers joined", func() bool {
		return c.Sim.UserTemplate(master)[vmcontext.KeyPubToken] == "" &&
			c.Sim.UserTemplate(master)[vmcontext.KeyPubTokenExpires] == ""
	}, c)
	if err := c.Advance(serve.DefaultRetireGrace + time.Second); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, "the token deleted after the retire grace", func() bool {
		return len(ownedTokens(t, cs)) == 0
	}, c)

	// Scale down by one: OneFlow terminates the oldest worker softly.
	oldest := workers[0].ID
	oldestNode := nodeOf(t, cs, oldest)
	until(t, ctx, "the role out of cooldown", func() bool { return c.Sim.ServiceState(svc) == "RUNNING" }, c)
	if err := c.Sim.Scale(svc, "worker", 3); err != nil {
		t.Fatal(err)
	}
	if err := c.Sim.WaitRoleVMs(ctx, svc, "worker", 3); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Nodes().Get(ctx, oldestNode, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("node %s of the scaled-down VM: %v", oldestNode, err)
	}
	leaves := c.Live(oldest)
	if last := leaves[len(leaves)-1]; last.Code != 0 || !strings.Contains(last.Output(), "node deleted true") {
		t.Errorf("leave on VM %d exited %d:\n%s", oldest, last.Code, last.Output())
	}

	// Terminate-hard one: no guest shutdown; its Node waits for the grace
	// period (virtual), then the acting master deletes it.
	hard := newIDs[0]
	hardNode := nodeOf(t, cs, hard)
	if err := c.TerminateHard(hard); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, "the gone VM's Node marked", func() bool {
		return strings.Contains(c.Sim.UserTemplate(master)[vmcontext.KeyPubNodesWithoutVM], hardNode)
	}, c)
	if nodeOf(t, cs, hard) == "" {
		t.Fatal("the Node was deleted before the grace period")
	}
	if err := c.Advance(6 * time.Minute); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, "the terminated VM's Node deleted after the grace period", func() bool { return nodeOf(t, cs, hard) == "" }, c)
	if len(ownedTokens(t, cs)) != 0 {
		t.Error("a token outlived the scale events")
	}
	var runs []*simcluster.Run
	for _, vm := range c.Sim.VMs() {
		runs = append(runs, c.Live(vm.ID)...)
	}
	runs = append(runs, c.Runs()...)
	assertNoSecrets(t, c, runs)
}

func until(t *testing.T, ctx context.Context, what string, cond func() bool, c *simcluster.Cluster) {
	t.Helper()
	for !cond() {
		if ctx.Err() != nil {
			for _, vm := range c.Sim.VMs() {
				dump(t, c.Live(vm.ID))
			}
			dump(t, c.Runs())
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func ownedTokens(t *testing.T, cs kubernetes.Interface) []string {
	t.Helper()
	list, err := cs.CoreV1().Secrets("kube-system").List(context.Background(), metav1.ListOptions{FieldSelector: "type=" + string(bootstrapapi.SecretTypeBootstrapToken)})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := range list.Items {
		if tok, ok, _ := kubeadm.ReadTokenSecret(&list.Items[i]); ok {
			out = append(out, tok.ID)
		}
	}
	return out
}

// nodeOf is the name of the Node labelled with the VM's ID, "" if none.
func nodeOf(t *testing.T, cs kubernetes.Interface, vmid int) string {
	t.Helper()
	list, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: kubeadm.LabelVMID + "=" + strconv.Itoa(vmid)})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		return ""
	}
	return list.Items[0].Name
}

func tokenIDs(t *testing.T, entries []env.Entry, cmd string) []string {
	t.Helper()
	var out []string
	for _, e := range byCommand(entries, "kubeadm", cmd) {
		if e.ExitCode == 0 {
			out = append(out, e.TokenID)
		}
	}
	return out
}
