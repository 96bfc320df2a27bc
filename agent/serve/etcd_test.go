package serve

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/onekube/onekube/agent/system/systemtest"
	"github.com/onekube/onekube/agent/testbed/loopback"
	vmcontext "github.com/onekube/onekube/context"
)

// etcdRemover is a quorum-safe MemberRemover over a real etcd, standing in
// for the HA work's agent/etcdm until the merge: it refuses when the
// cluster has no quorum now, or would not after the removal (healthy
// members left fewer than a majority of the new size).
type etcdRemover struct {
	endpoints map[string]string // member name: client URL
}

func (r *etcdRemover) RemoveMember(ctx context.Context, name string) error {
	var eps []string
	for _, ep := range r.endpoints {
		eps = append(eps, ep)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 2 * time.Second})
	if err != nil {
		return err
	}
	defer cli.Close()
	lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	// Serializable: a member answers from its own store, so the list is
	// there to judge even when the cluster has lost quorum.
	list, err := cli.MemberList(lctx, clientv3.WithSerializable())
	if err != nil {
		return fmt.Errorf("listing etcd members: %w", err)
	}
	var target uint64
	healthy, targetHealthy := 0, false
	for _, m := range list.Members {
		ok := false
		if len(m.ClientURLs) > 0 {
			sctx, cancel := context.WithTimeout(ctx, time.Second)
			_, err := cli.Status(sctx, m.ClientURLs[0])
			cancel()
			ok = err == nil
		}
		if ok {
			healthy++
		}
		if m.Name == name {
			target, targetHealthy = m.ID, ok
		}
	}
	n := len(list.Members)
	if target == 0 {
		return nil // no such member: done
	}
	if healthy < n/2+1 {
		return fmt.Errorf("etcd has no quorum (%d of %d members healthy): no member can be removed until it is restored", healthy, n)
	}
	left := healthy
	if targetHealthy {
		left--
	}
	if left < (n-1)/2+1 {
		return fmt.Errorf("removing %s would leave %d healthy of %d members, below quorum %d", name, left, n-1, (n-1)/2+1)
	}
	// Never through the member being removed, as etcdm.RemoveMember: it
	// stops once the removal commits and may answer "server stopped" to a
	// removal that succeeded (seen under load in CI).
	var others []string
	for n, ep := range r.endpoints {
		if n != name {
			others = append(others, ep)
		}
	}
	cli.SetEndpoints(others...)
	rctx, cancel2 := context.WithTimeout(ctx, 5*time.Second)
	defer cancel2()
	_, err = cli.MemberRemove(rctx, target)
	return err
}

// startEtcd3 runs a 3-member etcd on loopback, named after masters.
func startEtcd3(t *testing.T, names []string) (map[string]string, map[string]*exec.Cmd) {
	t.Helper()
	bins, err := loopback.FindBinaries()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ports := make([]int, 2*len(names))
	var ls []net.Listener
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		ls = append(ls, l)
	}
	for _, l := range ls {
		_ = l.Close()
	}
	var initial []string
	for i, n := range names {
		initial = append(initial, fmt.Sprintf("%s=http://127.0.0.1:%d", n, ports[2*i+1]))
	}
	clients, procs := map[string]string{}, map[string]*exec.Cmd{}
	dir := t.TempDir()
	for i, n := range names {
		client := "http://127.0.0.1:" + strconv.Itoa(ports[2*i])
		peer := "http://127.0.0.1:" + strconv.Itoa(ports[2*i+1])
		cmd := exec.Command(bins.Etcd, "--name="+n, "--data-dir="+filepath.Join(dir, n),
			"--listen-client-urls="+client, "--advertise-client-urls="+client,
			"--listen-peer-urls="+peer, "--initial-advertise-peer-urls="+peer,
			"--initial-cluster="+strings.Join(initial, ","), "--initial-cluster-state=new",
			"--unsafe-no-fsync", "--log-level=error")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		clients[n], procs[n] = client, cmd
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{clients[names[0]]}, DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := cli.Put(ctx, "ready", "1")
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd never formed: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return clients, procs
}

// threeMasters is a service of three masters with Nodes and a real
// 3-member etcd named after them, and the acting master's cleanup loop.
func threeMasters(t *testing.T) (*Cleanup, *fakeService, map[string]string, func(string), *systemtest.Clock) {
	t.Helper()
	names := []string{"master-1", "master-2", "master-3"}
	clients, procs := startEtcd3(t, names)
	s := loopback.Start(t, loopback.Options{})
	cs := s.Client(t)
	ctx := context.Background()
	og := newFakeService(1)
	for i, n := range names {
		og.add("master", i+1, nil)
		addNode(t, cs, n, i+1)
		node, _ := cs.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
		node.Labels[labelControlPlane] = ""
		if _, err := cs.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	clock := systemtest.NewClock(time.Now())
	c := &Cleanup{OneGate: og, Client: cs, Clock: clock, Members: &etcdRemover{endpoints: clients}}
	kill := func(n string) {
		_ = procs[n].Process.Kill()
		_, _ = procs[n].Process.Wait()
	}
	return c, og, clients, kill, clock
}

// Three masters on a real etcd: master-3's etcd is dead (its VM still
// listed) when master-2's VM leaves the service; removing master-2's
// healthy member would leave 1 healthy of 2, below quorum, so it is
// refused, published, and its Node kept. Once master-3's VM is gone too,
// its dead member goes first (2 healthy of 2 left), then master-2's, and
// the error is erased.
func TestCleanupRemovesEtcdMembersAndRefusesAtQuorum(t *testing.T) {
	c, og, clients, kill, clock := threeMasters(t)
	cs := c.Client
	kill("master-3")
	og.remove(2)
	mustTick(t, c)
	clock.Advance(DefaultCleanupGrace)
	mustTick(t, c)
	if !nodeExists(t, cs, "master-2") {
		t.Fatal("master-2's Node deleted although removing its member would break quorum")
	}
	if pub := og.ut(1, vmcontext.KeyPubServeError); !strings.Contains(pub, "master-2: etcd member not removed: removing master-2 would leave 1 healthy of 2 members; below quorum 2") { // "," is not carried by OneGate
		t.Errorf("ONEGATE_K8S_SERVE_ERROR = %q", pub)
	}
	if got := members(t, clients["master-1"]); strings.Join(got, ",") != "master-1,master-2,master-3" {
		t.Fatalf("etcd members after the refusal: %v", got)
	}

	og.remove(3)
	mustTick(t, c)
	clock.Advance(DefaultCleanupGrace)
	mustTick(t, c) // master-2 refused again, master-3 removed
	mustTick(t, c) // now master-2 can go
	for _, n := range []string{"master-2", "master-3"} {
		if nodeExists(t, cs, n) {
			t.Errorf("%s's Node kept: %+v", n, c.report)
		}
	}
	if got := members(t, clients["master-1"]); strings.Join(got, ",") != "master-1" {
		t.Fatalf("etcd members: %v", got)
	}
	if pub := og.ut(1, vmcontext.KeyPubServeError); pub != "" {
		t.Errorf("the error stayed: %q", pub)
	}
}

// Two of three masters died: etcd has no quorum, so no member can be
// removed; the refusal says so and the Nodes stay.
func TestCleanupRefusesWithoutQuorum(t *testing.T) {
	c, og, _, kill, clock := threeMasters(t)
	kill("master-2")
	kill("master-3")
	og.remove(2)
	og.remove(3)
	mustTick(t, c)
	clock.Advance(DefaultCleanupGrace)
	mustTick(t, c)
	if !nodeExists(t, c.Client, "master-2") || !nodeExists(t, c.Client, "master-3") {
		t.Fatal("a Node was deleted without quorum")
	}
	if pub := og.ut(1, vmcontext.KeyPubServeError); !strings.Contains(pub, "etcd has no quorum (1 of 3 members healthy)") {
		t.Errorf("ONEGATE_K8S_SERVE_ERROR = %q", pub)
	}
}

func members(t *testing.T, ep string) []string {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	list, err := cli.MemberList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range list.Members {
		out = append(out, m.Name)
	}
	return sortStrings(out)
}

func sortStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}
