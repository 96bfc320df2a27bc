//go:build realbed

package e2e

import (
	"context"
	_ "embed"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/testbed"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegatesim"
)

//go:embed testdata/flannel.yaml
var flannelManifest []byte

// agentArgs shorten the agent's backoff; everything else is production's.
// The bed's kubeadm init takes seconds (images present, the kubelet
// played), not the appliance's minute: the estimate says so.
var agentArgs = []string{"--poll-interval", "200ms", "--max-poll-interval", "2s", "--init-estimate", "8s", "--close-poll", "500ms", "--start-spread", "1s"}

func startService(t *testing.T, b *testbed.Bed, workers int) *testbed.Service {
	t.Helper()
	return startServiceWith(t, b, testbed.ServiceOptions{Workers: workers, CNIManifest: flannelManifest, AgentArgs: agentArgs})
}

// startServiceWith instantiates a service with o, its agent logs printed
// if the test fails.
func startServiceWith(t *testing.T, b *testbed.Bed, o testbed.ServiceOptions) *testbed.Service {
	t.Helper()
	s, err := b.StartService(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("agent output:\n%s", s.AgentLogs())
		}
		s.Close()
	})
	return s
}

func waitAgents(t *testing.T, s *testbed.Service, n int) []*testbed.AgentRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	runs, err := s.Wait(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// TestAgentService is the whole path: OneGate simulator -> the real
// onekube-agent in every VM -> the real kubeadm -> a real control plane,
// for 1 master and 2 workers booted from one image (one hostname).
func TestAgentService(t *testing.T) {
	b := newBed(t)
	s := startService(t, b, 2)
	runs := waitAgents(t, s, 3)
	first, last := runs[0].Start, runs[0].End
	for _, r := range runs {
		if r.Code != 0 || r.Err != nil {
			t.Errorf("VM %d (%s): onekube-agent bootstrap exited %d (%v); it said:\n%s", r.VM.ID, r.VM.Role, r.Code, r.Err, lastLines(r.Output(), 15))
		}
		first = minTime(first, r.Start)
	}
	master := s.Sim.RoleVMs(s.ID, "master")[0]
	cfg, err := b.RESTConfig(s.VM(master.ID), "/etc/kubernetes/admin.conf")
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()

	// Every VM's Node: its own name (the one it published), its own IP, Ready.
	want := map[string]string{}
	for _, vm := range s.Sim.VMs() {
		name := s.Sim.UserTemplate(vm.ID)[vmcontext.KeyPubNodeName]
		if name == "" {
			t.Errorf("VM %d published no node name", vm.ID)
			continue
		}
		if prev, dup := want[name]; dup {
			t.Errorf("VMs %s and %s share the node name %q", prev, vm.IP, name)
		}
		want[name] = vm.IP.String()
	}
	waitReady(t, client, want)
	// Each Node carries its VM's ID, set by its kubelet at registration
	// (and let through by the real NodeRestriction).
	for _, vm := range s.Sim.VMs() {
		name := s.Sim.UserTemplate(vm.ID)[vmcontext.KeyPubNodeName]
		node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("Node %s: %v", name, err)
			continue
		}
		if got := node.Labels[kubeadm.LabelVMID]; got != strconv.Itoa(vm.ID) {
			t.Errorf("Node %s: label %s=%q, want %d", name, kubeadm.LabelVMID, got, vm.ID)
		}
	}
	for _, r := range runs {
		last = maxTime(last, r.End)
	}
	t.Logf("from the first onekube-agent bootstrap to all %d Nodes Ready: %s (last agent exit %s after the first start)",
		len(want), time.Since(first).Round(100*time.Millisecond), last.Sub(first).Round(100*time.Millisecond))
	for _, vm := range s.Sim.VMs() {
		if ut := s.Sim.UserTemplate(vm.ID); ut[vmcontext.KeyReady] != "YES" {
			t.Errorf("VM %d: READY=%q, error %q", vm.ID, ut[vmcontext.KeyReady], ut[vmcontext.KeyPubError])
		}
	}

	// The published token is a live bootstrap token with the configured
	// TTL (ONEAPP_K8S_TOKEN_TTL, 1h by default), and cluster-info carries its JWS signature.
	pub := s.Sim.UserTemplate(master.ID)
	tok := pub[vmcontext.KeyPubToken]
	id, secret, ok := strings.Cut(tok, ".")
	if !ok {
		t.Fatalf("published token %q is not id.secret", vmcontext.Mask)
	}
	sec, err := client.CoreV1().Secrets("kube-system").Get(ctx, bootstrapapi.BootstrapTokenSecretPrefix+id, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the published token's Secret: %v", err)
	}
	if string(sec.Data[bootstrapapi.BootstrapTokenSecretKey]) != secret || string(sec.Data[bootstrapapi.BootstrapTokenUsageAuthentication]) != "true" {
		t.Error("the bootstrap token Secret does not hold the published secret for authentication")
	}
	exp, err := time.Parse(time.RFC3339, string(sec.Data[bootstrapapi.BootstrapTokenExpirationKey]))
	if err != nil {
		t.Fatalf("token expiration: %v", err)
	}
	ttl, _ := vmcontext.ParseTokenTTL(vmcontext.DefaultTokenTTL)
	if lo, hi := first.Add(ttl-time.Minute), time.Now().Add(ttl+time.Minute); exp.Before(lo) || exp.After(hi) {
		t.Errorf("token expires %s, want %s after the init (%s .. %s)", exp, ttl, lo, hi)
	}
	ci, err := client.CoreV1().ConfigMaps("kube-public").Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sig := ci.Data[bootstrapapi.JWSSignatureKeyPrefix+id]; !validJWS(sig, ci.Data[bootstrapapi.KubeConfigKey], id, secret) {
		t.Error("cluster-info carries no valid JWS signature for the published token")
	}

	// The CNI manifest's objects, with the template's pod network.
	checks := []struct {
		what string
		get  func() error
	}{
		{"namespace kube-flannel", func() error {
			_, err := client.CoreV1().Namespaces().Get(ctx, "kube-flannel", metav1.GetOptions{})
			return err
		}},
		{"serviceaccount flannel", func() error {
			_, err := client.CoreV1().ServiceAccounts("kube-flannel").Get(ctx, "flannel", metav1.GetOptions{})
			return err
		}},
		{"clusterrole flannel", func() error {
			_, err := client.RbacV1().ClusterRoles().Get(ctx, "flannel", metav1.GetOptions{})
			return err
		}},
		{"clusterrolebinding flannel", func() error {
			_, err := client.RbacV1().ClusterRoleBindings().Get(ctx, "flannel", metav1.GetOptions{})
			return err
		}},
		{"configmap kube-flannel-cfg", func() error {
			cm, err := client.CoreV1().ConfigMaps("kube-flannel").Get(ctx, "kube-flannel-cfg", metav1.GetOptions{})
			if err == nil && !strings.Contains(cm.Data["net-conf.json"], "10.244.0.0/16") {
				err = fmt.Errorf("net-conf.json %s", cm.Data["net-conf.json"])
			}
			return err
		}},
		{"daemonset kube-flannel-ds", func() error {
			_, err := client.AppsV1().DaemonSets("kube-flannel").Get(ctx, "kube-flannel-ds", metav1.GetOptions{})
			return err
		}},
	}
	for _, c := range checks {
		if err := c.get(); err != nil {
			t.Errorf("CNI manifest: %s: %v", c.what, err)
		}
	}

	// kubectl in the master VM, with the admin.conf kubeadm wrote there.
	out, err := s.VM(master.ID).Run(ctx, "kubectl", "--kubeconfig", "/etc/kubernetes/admin.conf", "get", "nodes", "-o", "wide")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for name, ip := range want {
		if !strings.Contains(out, name) || !strings.Contains(out, ip) {
			t.Errorf("kubectl get nodes in the master lacks %s (%s):\n%s", name, ip, out)
		}
	}
	if len(want) != 3 {
		t.Errorf("%d distinct node names published, want 3 (one per VM)", len(want))
	}
}

// TestAgentJoinRefused scales the worker role up after the master's
// published CA hash, or its token's secret, was tampered with: real kubeadm
// discovery must refuse the join, and the agent must fail without ever
// reporting READY. Each case has a service of its own: OneFlow cannot scale
// a role again while the refused VM keeps it SCALING.
func TestAgentJoinRefused(t *testing.T) {
	cases := []struct {
		name, key, kubeadmSays string
		tamper                 func(id string) string
	}{
		{"wrong CA hash", vmcontext.KeyPubHash, "none of the public keys",
			func(string) string { return strings.Repeat("ab", 32) }},
		{"wrong token secret", vmcontext.KeyPubToken, "failed to verify JWS signature",
			func(id string) string { return id + ".0000000000000000" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBed(t)
			// Without serve, which would publish the real token again
			// over the tampered one as soon as the worker waits.
			s := startServiceWith(t, b, testbed.ServiceOptions{CNIManifest: flannelManifest, AgentArgs: agentArgs, NoServe: true})
			runs := waitAgents(t, s, 1)
			if r := runs[0]; r.Code != 0 {
				t.Fatalf("master: onekube-agent bootstrap exited %d:\n%s", r.Code, lastLines(r.Output(), 15))
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := s.Sim.WaitServiceRunning(ctx); err != nil {
				t.Fatal(err)
			}
			master := s.Sim.RoleVMs(s.ID, "master")[0]
			id, _, _ := strings.Cut(s.Sim.UserTemplate(master.ID)[vmcontext.KeyPubToken], ".")
			value := c.tamper(id)
			publishAs(t, s, master, c.key+"="+value)
			if err := s.Sim.Scale(s.ID, "worker", 1); err != nil {
				t.Fatal(err)
			}
			runs = waitAgents(t, s, 2)
			r := runs[len(runs)-1]
			ut := s.Sim.UserTemplate(r.VM.ID)
			if r.Code == 0 || ut[vmcontext.KeyReady] == "YES" {
				t.Errorf("the agent exited %d, READY=%q", r.Code, ut[vmcontext.KeyReady])
			}
			if !strings.Contains(r.Output(), c.kubeadmSays) {
				t.Errorf("kubeadm's refusal (%q) is not in the agent's log:\n%s", c.kubeadmSays, lastLines(r.Output(), 15))
			}
			if ut[vmcontext.KeyPubError] == "" {
				t.Error("the refused VM published no ONEGATE_K8S_ERROR")
			}
			if strings.Contains(r.Output(), value) || strings.Contains(ut[vmcontext.KeyPubError], value) {
				t.Error("the tampered value leaked into the log or OneGate")
			}
			cfg, err := b.RESTConfig(s.VM(master.ID), "/etc/kubernetes/admin.conf")
			if err != nil {
				t.Fatal(err)
			}
			nodes, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(nodes.Items) != 1 {
				t.Errorf("%d nodes after a refused join, want the master's alone", len(nodes.Items))
			}
		})
	}
}

// publishAs sends a OneGate update as the VM itself would (PUT /vm with
// its token, the form body of the onegate CLI), straight to the simulator.
func publishAs(t *testing.T, s *testbed.Service, vm onegatesim.VMInfo, data string) {
	t.Helper()
	body := url.Values{"data": {data}, "type": {"1"}}.Encode()
	req := httptest.NewRequest(http.MethodPut, "/vm", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-ONEGATE-TOKEN", vm.Token.Reveal())
	req.Header.Set("X-ONEGATE-VMID", fmt.Sprint(vm.ID))
	rec := httptest.NewRecorder()
	s.Sim.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("PUT /vm as VM %d: %d %s", vm.ID, rec.Code, rec.Body.String())
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
