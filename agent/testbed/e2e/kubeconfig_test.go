//go:build realbed

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/OpenNebula/one/src/oca/go/src/goca"

	"github.com/onekube/onekube/agent/testbed"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/kubeconfig"
	"github.com/onekube/onekube/flow"
	"github.com/onekube/onekube/flow/access"
)

var flowCLI struct {
	once sync.Once
	path string
	err  error
}

// onekubeFlow builds the CLI once for the package.
func onekubeFlow(t *testing.T) string {
	t.Helper()
	flowCLI.once.Do(func() {
		dir, err := os.MkdirTemp("", "onekube-flow-realbed")
		if err != nil {
			flowCLI.err = err
			return
		}
		gomod, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			flowCLI.err = err
			return
		}
		cmd := exec.Command("go", "build", "-o", dir+"/", "./cmd/onekube-flow")
		cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
		if out, err := cmd.CombinedOutput(); err != nil {
			flowCLI.err = fmt.Errorf("go build onekube-flow: %v\n%s", err, out)
			return
		}
		flowCLI.path = filepath.Join(dir, "onekube-flow")
	})
	if flowCLI.err != nil {
		t.Fatal(flowCLI.err)
	}
	return flowCLI.path
}

// Ports of oned and OneFlow as the user's machine reaches them, served on
// the switch beside OneGate.
var (
	onedAddr = testbed.OneGateAddr.String() + ":2633"
	flowAddr = testbed.OneGateAddr.String() + ":2474"
)

// onSwitch runs a program from the bed's switch, a machine on the VMs'
// network (the user's, here): it reaches oned, OneFlow and every VM.
func onSwitch(t *testing.T, b *testbed.Bed, env []string, name string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := b.InSwitch(cmd.Start); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	}
	t.Fatal(err)
	return 0, "", ""
}

// The whole path on the real control plane: a service bootstrapped by the
// real agent and kubeadm; `onekubed serve` on the master, as its unit
// runs it, signing with the CA kubeadm made; the real onekube-flow on the
// user's machine talking to oned and OneFlow; and the real kubectl with
// the kubeconfig it wrote. Cluster-admin lists the Nodes, view cannot
// write, and a one-minute certificate is refused once its minute is over.
func TestKubeconfigRealControlPlane(t *testing.T) {
	t.Parallel() // mostly waiting: paired with another bed test (make e2e-real, docs/testbed.md)
	b := newBed(t)
	// One serve on the master, the test's own (below): two would each
	// challenge the request with a nonce of their own, which no single
	// unit does.
	s := startServiceWith(t, b, testbed.ServiceOptions{Workers: 1, CNIManifest: flannelManifest, AgentArgs: agentArgs, NoServe: true})
	// serve starts once the master bootstrapped, as its unit does: the
	// worker's node-client CSR waits for serve's approver.
	master := s.Sim.RoleVMs(s.ID, flow.RoleMaster)[0]
	if r := waitRun(t, s, master.ID); r.Code != 0 || r.Err != nil {
		t.Fatalf("master: bootstrap exited %d (%v):\n%s", r.Code, r.Err, lastLines(r.Output(), 20))
	}
	mvm := s.VM(master.ID)

	ctx, stop := context.WithCancel(context.Background())
	serve, err := mvm.Command(ctx, nil, "onekubed", "serve", "--log-format", "text")
	if err != nil {
		t.Fatal(err)
	}
	var serveLog lockedBuf
	serve.Stdout, serve.Stderr = &serveLog, &serveLog
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop()
		_ = serve.Wait()
		if t.Failed() {
			t.Logf("onekubed serve:\n%s", serveLog.String())
		}
	})
	for _, r := range waitAgents(t, s, 2) {
		if r.Code != 0 || r.Err != nil {
			t.Fatalf("VM %d: bootstrap exited %d (%v):\n%s", r.VM.ID, r.Code, r.Err, lastLines(r.Output(), 20))
		}
	}

	env := flowEnv(t, b, s)
	home := strings.TrimPrefix(env[0], "HOME=")
	kubeconfigPath := filepath.Join(home, ".kube", "config")
	cli := func(args ...string) (int, string, string) {
		return onSwitch(t, b, env, onekubeFlow(t), append(args, "--poll", "200ms")...)
	}
	kubectl := func(path string, args ...string) (string, error) {
		code, out, errs := onSwitch(t, b, []string{"HOME=" + home}, filepath.Join(bins.K8sDir, "kubectl"), append([]string{"--kubeconfig", path, "--request-timeout", "20s"}, args...)...)
		if code != 0 {
			return out + errs, fmt.Errorf("kubectl exited %d", code)
		}
		return out, nil
	}
	svc := fmt.Sprint(s.ID)

	// The service was instantiated before the user had a key: the first
	// run makes it and stores its public half, and is refused.
	code, _, stderr := cli("kubeconfig", svc, "--merge")
	if code != 1 || !strings.Contains(stderr, "not authorized") {
		t.Fatalf("first run: code %d\n%s", code, stderr)
	}
	// The owner authorizes it on the master: onevm updateconf --append.
	hc := &http.Client{Transport: &http.Transport{DialContext: b.DialContext}}
	one := goca.NewClient(goca.NewConfig("oneadmin", "pw", "http://"+onedAddr+"/RPC2"), hc)
	if _, err := one.CallContext(context.Background(), "one.vm.updateconf", master.ID,
		"CONTEXT = [ "+vmcontext.KeyKubeconfigUsers+` = "`+flow.KubeconfigUsers+`" ]`, 1); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	code, _, stderr = cli("kubeconfig", svc, "--merge", "--ttl", "1m")
	if code != 0 {
		t.Fatalf("kubeconfig --merge: code %d\n%s", code, stderr)
	}
	t.Logf("kubeconfig --merge took %s (serve ticks every 5 s): %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(stderr))
	if fi, err := os.Stat(kubeconfigPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig file: %v %v", fi, err)
	}
	raw, _ := os.ReadFile(kubeconfigPath)
	ex, ok := access.Lookup(raw, "kubernetes-"+svc, "oneadmin@kubernetes-"+svc)
	if !ok {
		t.Fatalf("no oneadmin entry in:\n%s", raw)
	}
	t.Logf("the kubeconfig file is %d bytes (kubeadm's RSA-2048 CA)", len(raw))
	want := fmt.Sprintf("https://%s:6443", master.IP)
	if ex.Server != want {
		t.Errorf("server %s, want the master's own address %s", ex.Server, want)
	}
	out, err := kubectl(kubeconfigPath, "get", "nodes", "-o", "name")
	if err != nil || strings.Count(out, "node/") != 2 {
		t.Fatalf("kubectl get nodes: %v\n%s", err, out)
	}
	t.Logf("kubectl get nodes:\n%s", out)

	code, viewText, stderr := cli("kubeconfig", svc, "--role", "view", "--ttl", "10m")
	if code != 0 {
		t.Fatalf("view: code %d\n%s", code, stderr)
	}
	viewPath := filepath.Join(home, "view")
	if err := os.WriteFile(viewPath, []byte(viewText), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := kubectl(viewPath, "get", "pods", "-A", "-o", "name"); err != nil || !strings.Contains(out, "kube-apiserver") {
		t.Errorf("view cannot read pods: %v\n%s", err, out)
	}
	if out, err := kubectl(viewPath, "create", "namespace", "from-view"); err == nil || !strings.Contains(out, "forbidden") {
		t.Errorf("view created a namespace: %v\n%s", err, out)
	}

	// After its minute, the first certificate is refused.
	time.Sleep(time.Until(ex.Cert.NotAfter) + 2*time.Second)
	out, err = kubectl(kubeconfigPath, "get", "nodes")
	if err == nil || !strings.Contains(out, "Unauthorized") && !strings.Contains(out, "must be logged in") {
		t.Errorf("an expired certificate still works: %v\n%s", err, out)
	}
	t.Logf("after %s: %s", kubeconfig.MinTTL, strings.TrimSpace(out))
	if !strings.Contains(serveLog.String(), "kubeconfig issued") {
		t.Errorf("serve did not log the issue:\n%s", serveLog.String())
	}
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
