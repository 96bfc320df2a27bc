//go:build realbed

package e2e

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/etcdm"
	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/lb/lbconfig"
	"github.com/onekube/onekube/agent/testbed"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegatesim"
)

// TestAgentHA is issue 11 on real control planes: 3 masters through
// OneGate and the real agent give a 3-member etcd; every node's local
// balancer learns all API servers from the cluster itself (with the
// node's own kubelet.conf); with one master's processes gone the API stays
// reachable through the endpoint from a worker, and a worker added then
// still joins.
func TestAgentHA(t *testing.T) {
	t.Parallel() // mostly waiting: paired with another bed test (make e2e-real, docs/testbed.md)
	b := newBed(t)
	s, err := b.StartService(testbed.ServiceOptions{Masters: 3, Workers: 1, CNIManifest: flannelManifest, AgentArgs: agentArgs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("agent output:\n%s", s.AgentLogs())
		}
		s.Close()
	})
	runs := waitAgents(t, s, 4)
	var booted, ready time.Time
	for _, r := range runs {
		if r.Code != 0 || r.Err != nil {
			t.Fatalf("VM %d (%s): exit %d (%v):\n%s", r.VM.ID, r.VM.Role, r.Code, r.Err, lastLines(r.Output(), 20))
		}
		if r.VM.Role == "master" {
			booted, ready = maxTime(booted, r.Start), maxTime(ready, r.End)
		}
	}
	t.Logf("figure: 3 masters booted to all READY: %s", ready.Sub(booted).Round(100*time.Millisecond))
	masters := s.Sim.RoleVMs(s.ID, "master")
	sort.Slice(masters, func(i, j int) bool { return masters[i].ID < masters[j].ID })
	worker := s.Sim.RoleVMs(s.ID, "worker")[0]
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()

	// etcd: 3 voting members, one per master, healthy, read with the
	// agent's etcd client and a master's certificates through the switch.
	ec := etcdClient(t, b, s, masters)
	members, err := ec.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := etcdm.Summary(members); got != expectSummary(masters, "voter") {
		t.Errorf("etcd members %q, want %q", got, expectSummary(masters, "voter"))
	}
	waitUntil(t, 30*time.Second, "the acting master to publish the members", func() bool {
		for _, m := range masters {
			if s.Sim.UserTemplate(m.ID)[vmcontext.KeyPubEtcd] == expectSummary(masters, "voter") {
				return true
			}
		}
		return false
	})
	waitUntil(t, 30*time.Second, "every grant and recipient withdrawn", func() bool {
		for _, m := range masters {
			ut := s.Sim.UserTemplate(m.ID)
			if ut[vmcontext.KeyPubCertKey] != "" || ut[vmcontext.KeyPubRecipient] != "" {
				return false
			}
		}
		return true
	})

	// Every node's balancer follows the API servers' own list, read with
	// its kubelet.conf: the Node authorizer's "get endpoints".
	for _, vm := range append([]onegatesim.VMInfo{worker}, masters...) {
		waitUntil(t, 40*time.Second, "VM "+strconv.Itoa(vm.ID)+"'s balancer to follow the endpoints", func() bool {
			b, err := s.VM(vm.ID).ReadFile(lbconfig.ConfigFile)
			return err == nil && strings.Contains(string(b), `"endpoints"`) && strings.Count(string(b), ":6443") == 3
		})
	}
	if log := s.Daemon(worker.ID, "lb"); strings.Contains(log, "following the API servers failed") {
		t.Errorf("the worker's balancer could not read the endpoints:\n%s", lastLines(log, 10))
	}
	lbUsage(t, ctx, s.VM(masters[0].ID))

	// kubeadm's own upload with the config serve renders (the path a
	// master takes when it joins more than 1.5 h after the last upload).
	key, _ := kubeadm.GenerateCertificateKey(nil)
	up, err := kubeadm.RenderUploadCerts(bins.Version, s.Sim.UserTemplate(masters[1].ID)[vmcontext.KeyPubNodeName], key)
	if err != nil {
		t.Fatal(err)
	}
	second := s.VM(masters[1].ID)
	if err := second.WriteFile("/var/lib/onekube/upload-certs.yaml", up, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := second.Run(ctx, "kubeadm", "init", "phase", "upload-certs", "--upload-certs", "--config", "/var/lib/onekube/upload-certs.yaml"); err != nil {
		t.Fatalf("upload-certs with serve's config: %v\n%s", err, out)
	}

	// The initialiser, whose address every worker's seed names first,
	// loses all its processes.
	if err := s.VM(masters[0].ID).PowerOff(); err != nil {
		t.Fatal(err)
	}
	wvm := s.VM(worker.ID)
	for i := range 6 {
		out, err := wvm.Run(ctx, "kubectl", "--kubeconfig", "/etc/kubernetes/kubelet.conf", "--request-timeout=10s", "get", "--raw=/readyz")
		if err != nil || strings.TrimSpace(out) != "ok" {
			t.Fatalf("request %d through the worker's endpoint with a master down: %q, %v", i, out, err)
		}
	}
	members, err = etcdClient(t, b, s, masters[1:]).Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := etcdm.Summary(members), "unhealthy@"+masters[0].IP.String()+" "+expectSummary(masters[1:], "voter"); got != want {
		t.Errorf("etcd with the initialiser down: %q, want %q", got, want)
	}

	// A worker added now joins: its balancer skips the dead master.
	if err := s.Sim.Scale(s.ID, "worker", 2); err != nil {
		t.Fatal(err)
	}
	runs = waitAgents(t, s, 5)
	for _, r := range runs {
		if r.VM.Role == "worker" && r.Code != 0 {
			t.Fatalf("worker %d after the master went down: exit %d:\n%s", r.VM.ID, r.Code, lastLines(r.Output(), 20))
		}
	}
	cfg, err := b.RESTConfig(s.VM(masters[1].ID), "/etc/kubernetes/admin.conf")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, vm := range s.Sim.RoleVMs(s.ID, "worker") {
		want[s.Sim.UserTemplate(vm.ID)[vmcontext.KeyPubNodeName]] = vm.IP.String()
	}
	waitReady(t, kubernetes.NewForConfigOrDie(cfg), want)
}

func expectSummary(ms []onegatesim.VMInfo, state string) string {
	ips := make([]string, len(ms))
	for i, m := range ms {
		ips[i] = m.IP.String()
	}
	sort.Slice(ips, func(i, j int) bool { return ips[i] < ips[j] })
	for i := range ips {
		ips[i] = state + "@" + ips[i]
	}
	return strings.Join(ips, " ")
}

// etcdClient is the agent's etcd client with the first listed master's
// etcd client certificate, dialling every listed master through the switch.
func etcdClient(t *testing.T, b *testbed.Bed, s *testbed.Service, ms []onegatesim.VMInfo) *etcdm.Client {
	t.Helper()
	dir := t.TempDir()
	vm := s.VM(ms[0].ID)
	for _, f := range []string{etcdm.EtcdCAFile, etcdm.EtcdCertFile, etcdm.EtcdKeyFile} {
		data, err := vm.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var eps []string
	for _, m := range ms {
		eps = append(eps, "https://"+net.JoinHostPort(m.IP.String(), "2379"))
	}
	ec, err := etcdm.New(etcdm.Config{Endpoints: eps,
		CAFile: filepath.Join(dir, "ca.crt"), CertFile: filepath.Join(dir, "healthcheck-client.crt"), KeyFile: filepath.Join(dir, "healthcheck-client.key"),
		Dial: func(ctx context.Context, addr string) (net.Conn, error) { return b.DialContext(ctx, "tcp", addr) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ec.Close() })
	return ec
}

// lbUsage reports the balancer's CPU time over its life and its RSS on a
// master, from /proc in the VM.
func lbUsage(t *testing.T, ctx context.Context, vm *testbed.VM) {
	t.Helper()
	const script = `for d in /proc/[0-9]*; do
  c=$(tr '\0' ' ' < $d/cmdline 2>/dev/null)
  case "$c" in "onekubed lb"*)
    echo "$(awk '{print $14+$15, $22}' $d/stat) $(awk '{print $1}' /proc/uptime) $(getconf CLK_TCK) $(awk '/VmRSS/{print $2}' $d/status)";;
  esac
done`
	out, err := vm.Run(ctx, "sh", "-c", script)
	f := strings.Fields(out)
	if err != nil || len(f) != 5 {
		t.Logf("could not read the balancer's usage: %v %q", err, out)
		return
	}
	ticks, _ := strconv.ParseFloat(f[0], 64)
	start, _ := strconv.ParseFloat(f[1], 64)
	up, _ := strconv.ParseFloat(f[2], 64)
	hz, _ := strconv.ParseFloat(f[3], 64)
	rss, _ := strconv.Atoi(f[4])
	life := up - start/hz
	t.Logf("figure: onekubed lb on a master: %.2f s CPU over %.0f s (%.2f%% of one core), RSS %d MiB", ticks/hz, life, 100*ticks/hz/life, rss>>10)
}

func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
