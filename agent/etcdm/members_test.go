package etcdm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/testbed/loopback"
)

// etcdMember is one real etcd process on its own loopback address
// (127.0.0.N), so members differ by peer IP as masters do.
type etcdMember struct {
	name, client string
	ip           netip.Addr
	cmd          *exec.Cmd
}

func freePort(t *testing.T, ip string) int {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startCluster runs an n-member etcd (the release kubeadm 1.37 runs).
func startCluster(t *testing.T, n int) []*etcdMember {
	t.Helper()
	bins, err := loopback.FindBinaries()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	dir := t.TempDir()
	var ms []*etcdMember
	var initial []string
	peers := map[string]string{}
	for i := 1; i <= n; i++ {
		ip := fmt.Sprintf("127.0.0.%d", i)
		m := &etcdMember{name: fmt.Sprintf("m%d", i), ip: netip.MustParseAddr(ip)}
		m.client = fmt.Sprintf("http://%s:%d", ip, freePort(t, ip))
		peers[m.name] = fmt.Sprintf("http://%s:%d", ip, freePort(t, ip))
		initial = append(initial, m.name+"="+peers[m.name])
		ms = append(ms, m)
	}
	for _, m := range ms {
		m.cmd = exec.Command(bins.Etcd, "--name="+m.name, "--data-dir="+filepath.Join(dir, m.name),
			"--listen-client-urls="+m.client, "--advertise-client-urls="+m.client,
			"--listen-peer-urls="+peers[m.name], "--initial-advertise-peer-urls="+peers[m.name],
			"--initial-cluster="+strings.Join(initial, ","), "--initial-cluster-state=new",
			"--unsafe-no-fsync", "--log-level=error")
		m.cmd.Stdout, m.cmd.Stderr = os.Stderr, os.Stderr
		if err := m.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.stop() })
	}
	c := client(t, ms[0])
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := c.Members(context.Background())
		healthy := 0
		for _, m := range got {
			if m.Healthy {
				healthy++
			}
		}
		if err == nil && healthy == n {
			return ms
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd cluster not healthy: %v %v", got, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (m *etcdMember) stop() {
	if m.cmd.Process != nil && m.cmd.ProcessState == nil {
		_ = m.cmd.Process.Kill()
		_ = m.cmd.Wait()
	}
}

func client(t *testing.T, ms ...*etcdMember) *Client {
	t.Helper()
	var eps []string
	for _, m := range ms {
		eps = append(eps, m.client)
	}
	c, err := New(Config{Endpoints: eps})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestRemoveMemberGuardsQuorum on a real 3-member etcd: one member dies,
// as a recreated master's old etcd does; removing it is allowed and
// leaves 2 healthy voters. With a second one dead, removing it would leave
// 1 of 2 healthy: refused with ErrQuorum, and the member list is untouched.
func TestRemoveMemberGuardsQuorum(t *testing.T) {
	ms := startCluster(t, 3)
	ctx := context.Background()
	c := client(t, ms[0], ms[1])

	ms[2].stop()
	got, err := c.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s := Summary(got); s != "voter@127.0.0.1 voter@127.0.0.2 unhealthy@127.0.0.3" {
		t.Errorf("summary %q", s)
	}
	if err := c.RemoveMember(ctx, ms[2].ip); err != nil {
		t.Fatalf("removing a dead member of 3: %v", err)
	}
	if err := c.RemoveMember(ctx, netip.MustParseAddr("127.0.0.9")); err != nil {
		t.Fatalf("removing nobody: %v", err)
	}
	ms[1].stop()
	c0 := client(t, ms[0])
	err = c0.RemoveMember(ctx, ms[1].ip)
	var qe *QuorumError
	if !errors.Is(err, ErrQuorum) || !errors.As(err, &qe) || qe.Voters != 2 || qe.Healthy != 1 {
		t.Fatalf("removal with 1 of 2 voters healthy: %v, want a QuorumError", err)
	}
	if !strings.Contains(err.Error(), "1 of 2 voting members are healthy") {
		t.Errorf("message: %v", err)
	}
}

// TestCheckRemoval is the quorum rule, by table.
func TestCheckRemoval(t *testing.T) {
	t.Parallel()
	ip := func(i int) string { return fmt.Sprintf("https://10.0.0.%d:2380", i) }
	m := func(i int, healthy, learner bool) Member {
		return Member{PeerURLs: []string{ip(i)}, Started: true, Healthy: healthy, Learner: learner}
	}
	target := netip.MustParseAddr("10.0.0.3")
	for _, c := range []struct {
		name    string
		members []Member
		ok      bool
	}{
		{"3 voters, the target dead", []Member{m(1, true, false), m(2, true, false), m(3, false, false)}, true},
		{"3 voters, target and one more dead", []Member{m(1, true, false), m(2, false, false), m(3, false, false)}, false},
		{"5 voters, target dead, one more dead", []Member{m(1, true, false), m(2, true, false), m(4, true, false), m(5, false, false), m(3, false, false)}, true},
		{"5 voters, target and two more dead", []Member{m(1, true, false), m(2, true, false), m(4, false, false), m(5, false, false), m(3, false, false)}, false},
		{"the target is a learner, others fine", []Member{m(1, true, false), m(3, false, true)}, true},
		{"the target is the last voter", []Member{m(3, true, false)}, false},
		{"2 voters left, both healthy", []Member{m(1, true, false), m(2, true, false), m(3, true, false)}, true},
		{"no quorum now, whatever is left", []Member{m(1, true, false), m(3, false, false)}, false},
		{"learners do not make a majority", []Member{m(1, true, false), m(2, false, false), m(4, true, true), m(3, false, false)}, false},
	} {
		err := CheckRemoval(c.members, target)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
		if err != nil && !errors.Is(err, ErrQuorum) {
			t.Errorf("%s: %v does not wrap ErrQuorum", c.name, err)
		}
	}
}

func TestAdvertisedClientURLs(t *testing.T) {
	t.Parallel()
	manifest := []byte(`apiVersion: v1
kind: Pod
metadata: {name: etcd, namespace: kube-system}
spec:
  containers:
  - name: etcd
    command:
    - etcd
    - --advertise-client-urls=https://192.0.2.10:2379
    - --listen-client-urls=https://127.0.0.1:2379,https://192.0.2.10:2379
`)
	got, err := advertisedClientURLs(manifest)
	if err != nil || len(got) != 1 || got[0] != "https://192.0.2.10:2379" {
		t.Fatalf("%v, %v", got, err)
	}
	for _, bad := range []string{"spec: {containers: [{name: etcd}]}", "spec: {containers: [{command: [--advertise-client-urls=ftp://x]}]}", "{"} {
		if _, err := advertisedClientURLs([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzAdvertisedClientURLs(f *testing.F) {
	f.Add([]byte("spec: {containers: [{command: [etcd, --advertise-client-urls=https://10.0.0.1:2379]}]}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		urls, err := advertisedClientURLs(b)
		if err == nil && len(urls) == 0 {
			t.Fatal("no error and no URL")
		}
	})
}
