package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/OpenNebula/one/src/oca/go/src/goca"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/onekube/onekube/agent"
	"github.com/onekube/onekube/agent/credential"
	"github.com/onekube/onekube/agent/internal/simcluster"
	"github.com/onekube/onekube/agent/serve"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/agent/testbed/loopback"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/kubeconfig"
	"github.com/onekube/onekube/context/onegate"
	"github.com/onekube/onekube/context/onegatesim"
	"github.com/onekube/onekube/flow"
	"github.com/onekube/onekube/flow/access"
)

// This file runs `onekube-flow kubeconfig` end to end on one machine: the
// real onekube-flow binary as a process, talking XML-RPC and REST to the
// simulator's oned and OneFlow facades; the same VMs served by the
// simulated OneGate to the master's kubeconfig loop (the serve runner,
// in-process, with the agent's real OneGate client); a real
// kube-apiserver (loopback) whose CA the master signs with; and the real
// kubectl using the file the CLI wrote.

var flowBin struct {
	once sync.Once
	path string
	err  error
}

func onekubeFlow(t *testing.T) string {
	t.Helper()
	flowBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "onekube-flow-bin")
		if err != nil {
			flowBin.err = err
			return
		}
		root, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			flowBin.err = err
			return
		}
		cmd := exec.Command("go", "build", "-o", dir+"/", "./cmd/onekube-flow")
		cmd.Dir = filepath.Dir(strings.TrimSpace(string(root)))
		if out, err := cmd.CombinedOutput(); err != nil {
			flowBin.err = fmt.Errorf("go build onekube-flow: %v\n%s", err, out)
			return
		}
		flowBin.path = filepath.Join(dir, "onekube-flow")
	})
	if flowBin.err != nil {
		t.Fatal(flowBin.err)
	}
	return flowBin.path
}

// kcEnv is one cluster: a service with a master and a worker, an API
// server, and a user's home.
type kcEnv struct {
	t              *testing.T
	sim            *onegatesim.Sim
	api            *loopback.Server
	svc            int
	master, worker onegatesim.VMInfo
	masterOG       agent.OneGate
	workerOG       agent.OneGate
	onedURL        string
	flowURL        string
	home           string
	stopLoop       context.CancelFunc
	loopDone       chan struct{}
}

func newKCEnv(t *testing.T) *kcEnv {
	t.Helper()
	api := loopback.Start(t, loopback.Options{ControllerManager: true})
	sim := onegatesim.New(onegatesim.Options{Dir: t.TempDir()})
	if _, err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	sim.SetOwner(3, "alice", nil) // no ONEKUBE_AGE_RECIPIENT yet
	oned := httptest.NewServer(sim.OnedHandler("alice", "pw"))
	oflow := httptest.NewServer(sim.OneFlowHandler("alice", "pw"))
	t.Cleanup(oned.Close)
	t.Cleanup(oflow.Close)

	tmpl, merge, err := simcluster.Template(1, "straight")
	if err != nil {
		t.Fatal(err)
	}
	// The API server is on loopback, not at the master's simulated NIC
	// address: the endpoint input says where, as a VIP would.
	// OneFlow 7 writes every user input into CONTEXT, so it goes in as
	// one; "localhost" because the endpoint rule refuses loopback
	// addresses (no other node could reach them), and the loopback server's
	// certificate names localhost too.
	u, _ := url.Parse(api.URL)
	merge = withInput(t, merge, access.KeyControlPlaneEP, "localhost:"+u.Port())
	id, err := sim.Instantiate(tmpl, merge)
	if err != nil {
		t.Fatal(err)
	}
	e := &kcEnv{t: t, sim: sim, api: api, svc: id, onedURL: oned.URL + "/RPC2", flowURL: oflow.URL, home: t.TempDir()}
	e.master = sim.RoleVMs(id, flow.RoleMaster)[0]
	e.masterOG = e.vmOneGate(e.master)
	// The master's bootstrap as far as this test needs it: READY, and the
	// serve loop's presence.
	ctx := context.Background()
	if err := e.masterOG.UpdateVM(ctx, onegate.KV{Key: vmcontext.KeyReady, Value: "YES"}, onegate.KV{Key: vmcontext.KeyPubServe, Value: serve.ModeActing}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(sim.RoleVMs(id, flow.RoleWorker)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the worker was never created")
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.worker = sim.RoleVMs(id, flow.RoleWorker)[0]
	e.workerOG = e.vmOneGate(e.worker)
	if err := os.MkdirAll(filepath.Join(e.home, ".one"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.home, ".one", "one_auth"), []byte("alice:pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("master-%d", e.master.ID)}}
	if _, err := api.Client(t).CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.startLoop()
	return e
}

func (e *kcEnv) vmOneGate(v onegatesim.VMInfo) agent.OneGate {
	og, err := agent.NewOneGateClient(agent.OneGateConfig{Creds: vmcontext.Credentials{Endpoint: e.sim.Endpoint(), VMID: v.ID, Token: v.Token}})
	if err != nil {
		e.t.Fatal(err)
	}
	return og
}

// startLoop runs the master's kubeconfig loop under the serve runner,
// with short ticks.
func (e *kcEnv) startLoop() {
	certPEM, _ := os.ReadFile(e.api.CACertPath())
	keyPEM, _ := os.ReadFile(e.api.CAKeyPath())
	ca, err := credential.ParseCA(certPEM, keyPEM)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.stopLoop, e.loopDone = cancel, make(chan struct{})
	r := &serve.Runner{Loops: []serve.Spec{{Loop: &serve.Kubeconfig{
		OneGate: e.masterOG, VMID: e.master.ID, Client: e.api.Client(e.t), Clock: system.RealClock{},
		CA: func() (*credential.CA, error) { return ca, nil }, Log: slog.New(slog.DiscardHandler),
		Idle: 200 * time.Millisecond, Busy: 100 * time.Millisecond,
	}, ErrorDelay: time.Second}}}
	go func() {
		defer close(e.loopDone)
		_ = r.Run(ctx)
	}()
	e.t.Cleanup(e.stop)
}

func (e *kcEnv) stop() {
	if e.stopLoop != nil {
		e.stopLoop()
		<-e.loopDone
		e.stopLoop = nil
	}
}

// cli runs onekube-flow as the user would, from their home.
func (e *kcEnv) cli(args ...string) (int, string, string) {
	e.t.Helper()
	cmd := exec.Command(onekubeFlow(e.t), args...)
	cmd.Env = []string{"HOME=" + e.home, "PATH=/usr/bin:/bin", "ONE_XMLRPC=" + e.onedURL, "ONEFLOW_URL=" + e.flowURL,
		"KUBECONFIG=" + filepath.Join(e.home, ".kube", "config")}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// updateConf is the owner's `onevm updateconf --append` on the master.
func (e *kcEnv) updateConf(vars string) {
	e.t.Helper()
	c := goca.NewClient(goca.NewConfig("alice", "pw", e.onedURL), nil)
	if _, err := c.CallContext(context.Background(), "one.vm.updateconf", e.master.ID, "CONTEXT = [ "+vars+" ]", 1); err != nil {
		e.t.Fatalf("updateconf: %v", err)
	}
}

// kubectl runs the real kubectl of the test bed build when there is one.
func kubectl(t *testing.T, kubeconfigPath string, args ...string) (string, error) {
	t.Helper()
	bins, err := loopback.FindBinaries()
	if err != nil {
		t.Skip(err)
	}
	bin := filepath.Join(filepath.Dir(bins.APIServer), "kubectl")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no kubectl beside the test bed binaries: %v", err)
	}
	cmd := exec.Command(bin, append([]string{"--kubeconfig", kubeconfigPath, "--request-timeout", "20s"}, args...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// withInput sets one user input's value in an instantiate merge document.
func withInput(t *testing.T, merge []byte, key, value string) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(merge, &doc); err != nil {
		t.Fatal(err)
	}
	doc["user_inputs_values"].(map[string]any)[key] = value
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func withMasterContext(t *testing.T, tmpl []byte, vars map[string]string) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(tmpl, &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc["roles"].([]any) {
		role := r.(map[string]any)
		if role["name"] != flow.RoleMaster {
			continue
		}
		ctx := role["template_contents"].(map[string]any)["CONTEXT"].(map[string]any)
		for k, v := range vars {
			ctx[k] = v
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const otherKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster: {server: "https://prod.example:6443"}
users:
- name: prod-admin
  user: {token: prod-token}
contexts:
- name: prod
  context: {cluster: prod, user: prod-admin}
current-context: prod
`

// The whole path, as a user lives it: the first run makes the key, stores
// its public half in the OpenNebula user and is told it is not authorized
// yet; the owner authorizes it (onevm updateconf); the kubeconfig merged
// into ~/.kube/config lists the Nodes with the real kubectl and keeps the
// user's other context; a view credential cannot write; a second user with
// another key gets their own credential and cannot open the first one's;
// and the master refuses what a hostile sibling asks for.
func TestKubeconfigThroughTheSimulator(t *testing.T) {
	e := newKCEnv(t)
	kubeDir := filepath.Join(e.home, ".kube")
	if err := os.MkdirAll(kubeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(kubeDir, "config")
	if err := os.WriteFile(cfgPath, []byte(otherKubeconfig), 0o644); err != nil {
		t.Fatal(err)
	}
	svc := fmt.Sprint(e.svc)

	// 1. First run: no key anywhere yet.
	code, _, stderr := e.cli("kubeconfig", svc, "--merge", "--poll", "100ms")
	t.Logf("first run:\n%s", stderr)
	if code != 1 || !strings.Contains(stderr, "created your key") || !strings.Contains(stderr, "stored your public key") ||
		!strings.Contains(stderr, "not authorized: master VM") {
		t.Fatalf("first run: code %d\n%s", code, stderr)
	}
	keyPath := filepath.Join(e.home, ".config", "onekube", "age-key.txt")
	alice, err := access.LoadIdentity(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.sim.OwnerTemplate()[vmcontext.UserKeyAgeRecipient]; got != alice.Recipient {
		t.Fatalf("the user template holds %q, want the key's %q", got, alice.Recipient)
	}
	if b, _ := os.ReadFile(cfgPath); string(b) != otherKubeconfig {
		t.Fatal("a refused run changed the kubeconfig")
	}

	// 2. The owner authorizes: the same expression flow renders, resolved
	// again by oned now that the user template names the key.
	e.updateConf(vmcontext.KeyKubeconfigUsers + ` = "` + flow.KubeconfigUsers + `"`)
	start := time.Now()
	code, stdout, stderr := e.cli("kubeconfig", svc, "--merge", "--poll", "100ms")
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("authorized run: code %d\n%s", code, stderr)
	}
	t.Logf("kubeconfig --merge took %s: %s", took.Round(time.Millisecond), strings.TrimSpace(stderr))
	if stdout != "" {
		t.Errorf("--merge printed to stdout: %q", stdout)
	}
	if fi, _ := os.Stat(cfgPath); fi.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode %04o, want 0600", fi.Mode().Perm())
	}
	out, err := kubectl(t, cfgPath, "get", "nodes", "-o", "name")
	if err != nil || strings.TrimSpace(out) != fmt.Sprintf("node/master-%d", e.master.ID) {
		t.Fatalf("kubectl get nodes: %v\n%s", err, out)
	}
	out, err = kubectl(t, cfgPath, "config", "get-contexts", "-o", "name")
	if err != nil || !strings.Contains(out, "prod\n") || !strings.Contains(out, "alice@") {
		t.Errorf("contexts after the merge: %v\n%s", err, out)
	}
	if out, _ := kubectl(t, cfgPath, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"); out != "alice" {
		t.Errorf("whoami: %q", out)
	}
	e.waitErased()

	// Again without --renew: the valid credential is kept, nothing asked.
	code, _, stderr = e.cli("kubeconfig", svc, "--merge", "--poll", "100ms")
	if code != 0 || !strings.Contains(stderr, "--renew gets a fresh one") {
		t.Errorf("second run: code %d\n%s", code, stderr)
	}

	// 3. The view role, printed to stdout: reads, cannot write.
	code, stdout, stderr = e.cli("kubeconfig", svc, "--role", "view", "--ttl", "1h", "--poll", "100ms")
	if code != 0 {
		t.Fatalf("view: code %d\n%s", code, stderr)
	}
	viewPath := filepath.Join(t.TempDir(), "view")
	if err := os.WriteFile(viewPath, []byte(stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	// --ttl reached the certificate.
	if ex, ok := access.Lookup([]byte(stdout), "kubernetes-"+svc, "alice-view@kubernetes-"+svc); !ok {
		t.Errorf("the printed kubeconfig has no alice-view entry:\n%s", stdout)
	} else if left := time.Until(ex.Cert.NotAfter); left < 58*time.Minute || left > time.Hour {
		t.Errorf("--ttl 1h gave a certificate valid %s more", left)
	}
	eventuallyOK(t, "view lists nodes", func() error { _, err := kubectl(t, viewPath, "get", "nodes"); return err })
	if out, err := kubectl(t, viewPath, "create", "configmap", "x", "-n", "default"); err == nil || !strings.Contains(out, "forbidden") {
		t.Errorf("view wrote: %v\n%s", err, out)
	}

	// 4. A second user with another key, authorized by the owner.
	bobKey := filepath.Join(t.TempDir(), "bob.txt")
	bob, err := access.CreateIdentity(bobKey, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e.updateConf(vmcontext.KeyKubeconfigUsers + ` = "` + flow.KubeconfigUsers + `;bob:` + bob.Recipient + `"`)
	code, stdout, stderr = e.cli("kubeconfig", svc, "--identity", bobKey, "--poll", "100ms")
	if code != 0 {
		t.Fatalf("bob: code %d\n%s", code, stderr)
	}
	bobPath := filepath.Join(t.TempDir(), "bob")
	_ = os.WriteFile(bobPath, []byte(stdout), 0o600)
	if out, _ := kubectl(t, bobPath, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"); out != "bob" {
		t.Errorf("bob's whoami: %q", out)
	}
	// Bob's entry names no role: view, and no more.
	if code, _, stderr := e.cli("kubeconfig", svc, "--identity", bobKey, "--role", "cluster-admin", "--poll", "100ms"); code != 1 ||
		!strings.Contains(stderr, "at most the view role") {
		t.Errorf("bob as cluster-admin: code %d\n%s", code, stderr)
	}
	// Bob cannot open a challenge sealed to alice: ask the master for one
	// (anyone can write a request naming alice) and try.
	sealed := e.request("ALICE00001", kubeconfig.Request{Name: "alice", Role: kubeconfig.RoleClusterAdmin, TTL: time.Hour, Recipient: alice.Recipient})
	t.Logf("a sealed challenge is %d bytes", len(sealed))
	if _, err := kubeconfig.Open(sealed, bob.Identities()...); !errors.Is(err, kubeconfig.ErrNotForYou) {
		t.Errorf("bob opened alice's challenge: %v", err)
	}
	if _, err := kubeconfig.Open(sealed, alice.Identities()...); err != nil {
		t.Errorf("alice cannot open her own challenge: %v", err)
	}

	// 5. A hostile sibling asks, through OneGate, for alice's name with its
	// own key, and for a name nobody authorized: refused, nothing sealed.
	mallory, _ := access.CreateIdentity(filepath.Join(t.TempDir(), "m.txt"), time.Now())
	for id, req := range map[string]kubeconfig.Request{
		"HOSTILE001": {Name: "alice", Role: kubeconfig.RoleClusterAdmin, TTL: time.Hour, Recipient: mallory.Recipient},
		"HOSTILE002": {Name: "mallory", Role: kubeconfig.RoleClusterAdmin, TTL: time.Hour, Recipient: mallory.Recipient},
	} {
		a := e.hostileRequest(id, req)
		if a.Sealed != "" || !strings.Contains(a.Reason, "not authorized") {
			t.Errorf("%s: %+v, want a refusal", id, a)
		}
	}
	// A protocol 1 request, as an old onekube-flow writes it, is told to
	// upgrade in the answer format that CLI reads.
	wc := e.workerClient()
	bg := context.Background()
	if err := wc.UpdateVMByID(bg, e.master.ID, onegate.KV{Key: kubeconfig.RequestKey("OLDCLI0001"), Value: "1 alice view 3600 " + alice.Recipient}); err != nil {
		t.Fatal(err)
	}
	if raw := e.waitAnswer("OLDCLI0001"); !strings.HasPrefix(raw, "1 refused ") || !strings.Contains(raw, "upgrade onekube-flow") {
		t.Errorf("an old CLI's request: %q", raw)
	}
	_ = wc.UpdateVMByID(bg, e.master.ID, onegate.KV{Key: kubeconfig.RequestKey("OLDCLI0001"), Value: kubeconfig.Done})

	// 6. The owner deletes alice's admin binding; a sibling that knows her
	// public key (CONTEXT is readable by every VM) writes a request for
	// her to get it back. The master only challenges: the binding stays
	// deleted and nothing is signed.
	crbs := e.api.Client(t).RbacV1().ClusterRoleBindings()
	adminCRB := kubeconfig.Group("alice", kubeconfig.RoleClusterAdmin)
	if err := crbs.Delete(bg, adminCRB, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	forged, _ := kubeconfig.Request{Name: "alice", Role: kubeconfig.RoleClusterAdmin, TTL: kubeconfig.MaxTTL, Recipient: alice.Recipient}.Encode()
	if err := wc.UpdateVMByID(bg, e.master.ID, onegate.KV{Key: kubeconfig.RequestKey("FORGED0001"), Value: forged}); err != nil {
		t.Fatal(err)
	}
	e.waitAnswer("FORGED0001")
	time.Sleep(time.Second) // ten of the loop's busy ticks
	if a, err := kubeconfig.ParseAnswer(e.sim.UserTemplate(e.master.ID)[kubeconfig.AnswerKey("FORGED0001")]); err != nil || !a.Challenge {
		t.Errorf("a forged request got %+v, %v; want a challenge and nothing more", a, err)
	}
	if _, err := crbs.Get(bg, adminCRB, metav1.GetOptions{}); err == nil {
		t.Error("a forged request restored alice's binding")
	}
	_ = wc.UpdateVMByID(bg, e.master.ID, onegate.KV{Key: kubeconfig.RequestKey("FORGED0001"), Value: kubeconfig.Done})

	// 7. A sibling rewrites alice's pending request, its validity or its
	// role, however fast: before the master reads it (the CLI will not
	// prove a challenge for what it did not ask) or after her proof (the
	// master finds the proof no longer matches). Nothing is issued.
	for _, tc := range []struct {
		name    string
		args    []string
		rewrite func(r kubeconfig.Request) kubeconfig.Request
	}{
		{"validity", []string{"--ttl", "1h"}, func(r kubeconfig.Request) kubeconfig.Request { r.TTL = kubeconfig.MaxTTL; return r }},
		{"role", []string{"--role", "view"}, func(r kubeconfig.Request) kubeconfig.Request { r.Role = kubeconfig.RoleClusterAdmin; return r }},
	} {
		for attempt := 1; ; attempt++ {
			stop := e.rewriteRequests(tc.rewrite)
			code, stdout, stderr := e.cli(append([]string{"kubeconfig", svc, "--poll", "100ms", "--timeout", "20s"}, tc.args...)...)
			granted, rewrote := stop()
			t.Logf("rewritten %s, attempt %d: %s", tc.name, attempt, strings.TrimSpace(stderr))
			if !rewrote && attempt < 5 {
				// The sibling lost the race: on a loaded machine the master
				// answered and alice's CLI proved before the rewriter's
				// goroutine ran. What was issued is what she asked, and it
				// restored her binding; the owner deletes it again, and the
				// sibling tries again.
				_ = crbs.Delete(bg, adminCRB, metav1.DeleteOptions{})
				continue
			}
			if code != 1 || stdout != "" || granted ||
				!(strings.Contains(stderr, "rewrote it") || strings.Contains(stderr, "proof does not answer")) {
				// Never the kubeconfig itself: it holds a key.
				t.Errorf("rewritten %s: code %d, granted %v, rewritten %v, %d bytes on stdout\n%s", tc.name, code, granted, rewrote, len(stdout), stderr)
			}
			break
		}
	}
	if _, err := crbs.Get(bg, adminCRB, metav1.GetOptions{}); err == nil {
		t.Error("a rewritten request restored alice's binding")
	}

	// Every exchange ends erased from the master's USER_TEMPLATE.
	e.waitErased()
}

// waitAnswer waits for the master's answer to request id.
func (e *kcEnv) waitAnswer(id string) string {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if raw, ok := e.sim.UserTemplate(e.master.ID)[kubeconfig.AnswerKey(id)]; ok {
			return raw
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("no answer to %s", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// rewriteRequests plays the hostile sibling until stop is called: it
// rewrites every pending request that rewrite changes, through OneGate
// from the worker, keeping any proof, until that request is granted.
// stop reports whether any answer it saw was granted and whether it
// rewrote a request before that, and marks whatever request it may have
// revived done.
func (e *kcEnv) rewriteRequests(rewrite func(kubeconfig.Request) kubeconfig.Request) (stop func() (granted, rewrote bool)) {
	type result struct{ granted, rewrote bool }
	quit, out := make(chan struct{}), make(chan result, 1)
	wc := e.workerClient()
	ctx := context.Background()
	go func() {
		var r result
		defer func() { out <- r }()
		for {
			select {
			case <-quit:
				return
			case <-time.After(5 * time.Millisecond):
			}
			ut := e.sim.UserTemplate(e.master.ID)
			for k, v := range ut {
				kind, id, ok := kubeconfig.ParseKey(k)
				if !ok || kind != kubeconfig.KindRequest || v == kubeconfig.Done {
					continue
				}
				if a, err := kubeconfig.ParseAnswer(ut[kubeconfig.AnswerKey(id)]); err == nil && a.Granted() {
					r.granted = true
					continue // too late: a rewrite now proves nothing
				}
				req, err := kubeconfig.ParseRequest(v)
				if err != nil {
					continue
				}
				if w := rewrite(req); w != req {
					nv, _ := w.Encode()
					if wc.UpdateVMByID(ctx, e.master.ID, onegate.KV{Key: k, Value: nv}) == nil {
						r.rewrote = true
					}
				}
			}
		}
	}()
	return func() (bool, bool) {
		close(quit)
		r := <-out
		for k, v := range e.sim.UserTemplate(e.master.ID) {
			if kind, _, ok := kubeconfig.ParseKey(k); ok && kind == kubeconfig.KindRequest && v != kubeconfig.Done {
				_ = wc.UpdateVMByID(ctx, e.master.ID, onegate.KV{Key: k, Value: kubeconfig.Done})
			}
		}
		return r.granted, r.rewrote
	}
}

// request writes a request as anyone could (the worker, through OneGate)
// and returns the master's sealed challenge.
func (e *kcEnv) request(id string, req kubeconfig.Request) string {
	e.t.Helper()
	a := e.hostileRequest(id, req)
	if !a.Challenge {
		e.t.Fatalf("request %s: %+v, want a challenge", id, a)
	}
	return a.Sealed
}

// hostileRequest writes a request into the master's USER_TEMPLATE from
// the worker (PUT /vms/:id, allowed by OneGate's default permissions),
// waits for the answer and marks the request done.
func (e *kcEnv) hostileRequest(id string, req kubeconfig.Request) kubeconfig.Answer {
	e.t.Helper()
	v, err := req.Encode()
	if err != nil {
		e.t.Fatal(err)
	}
	wc := e.workerClient()
	ctx := context.Background()
	if err := wc.UpdateVMByID(ctx, e.master.ID, onegate.KV{Key: kubeconfig.RequestKey(id), Value: v}); err != nil {
		e.t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if raw, ok := e.sim.UserTemplate(e.master.ID)[kubeconfig.AnswerKey(id)]; ok {
			a, err := kubeconfig.ParseAnswer(raw)
			if err != nil {
				e.t.Fatal(err)
			}
			_ = wc.UpdateVMByID(ctx, e.master.ID, onegate.KV{Key: kubeconfig.RequestKey(id), Value: kubeconfig.Done})
			return a
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("no answer to %s", id)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (e *kcEnv) workerClient() *onegate.Client {
	c, err := onegate.New(onegate.Config{Endpoint: e.sim.Endpoint(), VMID: e.worker.ID, Token: e.worker.Token})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// waitErased waits until no request or answer is left on the master.
func (e *kcEnv) waitErased() {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var left []string
		for k := range e.sim.UserTemplate(e.master.ID) {
			if _, _, ok := kubeconfig.ParseKey(k); ok {
				left = append(left, k)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("left on the master: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func eventuallyOK(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Whatever lands in the answer key that is not the master's genuine
// answer to this request ends in a clear error and no file: a master that
// does not answer, an answer sealed to another key, altered, expired,
// replayed from another request, or forged with a CA of its own (which
// only the live check against the API server can catch).
func TestKubeconfigRefusesBadAnswers(t *testing.T) {
	e := newKCEnv(t)
	alice, err := access.CreateIdentity(filepath.Join(e.home, ".config", "onekube", "age-key.txt"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e.updateConf(vmcontext.KeyKubeconfigUsers + ` = "alice:` + alice.Recipient + `"`)
	e.stop() // from here on, the hostile sibling answers
	svc := fmt.Sprint(e.svc)
	cfgPath := filepath.Join(e.home, ".kube", "config")
	_ = os.MkdirAll(filepath.Dir(cfgPath), 0o700)
	if err := os.WriteFile(cfgPath, []byte(otherKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := e.cli("kubeconfig", svc, "--merge", "--poll", "100ms", "--timeout", "2s")
	if code != 1 || !strings.Contains(stderr, "did not answer within 2s") || !strings.Contains(stderr, "ONEGATE_K8S_SERVE=acting") {
		t.Errorf("no master: code %d\n%s", code, stderr)
	}

	realCA := loadLoopbackCA(t, e.api)
	fakeCA := newFakeCA(t)
	mallory, _ := access.CreateIdentity(filepath.Join(t.TempDir(), "m"), time.Now())
	payload := func(ca *credential.CA, id string, req kubeconfig.Request, now time.Time, ttl time.Duration) []byte {
		c, err := ca.Issue(req.Name, kubeconfig.Group(req.Name, req.Role), ttl, now, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := kubeconfig.Payload{ID: id, User: req.Name, Role: req.Role, CAPEM: ca.CertPEM, CertPEM: c.CertPEM, Key: c.Key, NotAfter: c.NotAfter}.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	seal := func(b []byte, to string) string {
		s, err := kubeconfig.Seal(b, to)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		name   string
		answer func(id string, req kubeconfig.Request) string // the sealed text
		want   string
	}{
		{"sealed to another key", func(id string, req kubeconfig.Request) string {
			return seal(payload(realCA, id, req, time.Now(), time.Hour), mallory.Recipient)
		}, "cannot open the answer"},
		{"altered", func(id string, req kubeconfig.Request) string {
			s := []byte(seal(payload(realCA, id, req, time.Now(), time.Hour), req.Recipient))
			i := len(s) * 2 / 3
			s[i] = map[bool]byte{true: 'B', false: 'A'}[s[i] == 'A']
			return string(s)
		}, "altered or corrupted"},
		{"expired", func(id string, req kubeconfig.Request) string {
			return seal(payload(realCA, id, req, time.Now().Add(-3*time.Hour), time.Hour), req.Recipient)
		}, "expired"},
		{"another request's", func(_ string, req kubeconfig.Request) string {
			return seal(payload(realCA, "OLDANSWER1", req, time.Now(), time.Hour), req.Recipient)
		}, "it answers request OLDANSWER1"},
		// (The test CA ends in a day, so a certificate cannot outlive 24h
		// here; TestCLIRefusesWrongLifetimeOrRole has the longer ones.)
		{"another lifetime than asked", func(id string, req kubeconfig.Request) string {
			return seal(payload(realCA, id, req, time.Now(), req.TTL/2), req.Recipient)
		}, "not 24h0m0s after the request"},
		{"forged with its own CA", func(id string, req kubeconfig.Request) string {
			return seal(payload(fakeCA, id, req, time.Now(), req.TTL), req.Recipient)
		}, "does not present a certificate of the answer's CA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := e.answerNextRequest(t, tc.answer)
			code, stdout, stderr = e.cli("kubeconfig", svc, "--merge", "--poll", "100ms", "--timeout", "20s")
			<-done
			if code != 1 || !strings.Contains(stderr, tc.want) || stdout != "" {
				t.Errorf("code %d, stdout %q\n%s\nwant %q", code, stdout, stderr, tc.want)
			}
			if b, _ := os.ReadFile(cfgPath); string(b) != otherKubeconfig {
				t.Error("the kubeconfig changed")
			}
			t.Logf("%s", strings.TrimSpace(stderr))
		})
	}
}

// answerNextRequest plays the hostile sibling: it waits for a request on
// the master and writes answer's sealed text as the answer, through
// OneGate from the worker.
func (e *kcEnv) answerNextRequest(t *testing.T, answer func(id string, req kubeconfig.Request) string) <-chan struct{} {
	done := make(chan struct{})
	wc := e.workerClient()
	go func() {
		defer close(done)
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			for k, v := range e.sim.UserTemplate(e.master.ID) {
				kind, id, ok := kubeconfig.ParseKey(k)
				if !ok || kind != kubeconfig.KindRequest || v == kubeconfig.Done {
					continue
				}
				if _, answered := e.sim.UserTemplate(e.master.ID)[kubeconfig.AnswerKey(id)]; answered {
					continue
				}
				req, err := kubeconfig.ParseRequest(v)
				if err != nil {
					t.Error(err)
					return
				}
				val, err := kubeconfig.Answer{At: time.Now(), Sealed: answer(id, req)}.Encode()
				if err != nil {
					t.Error(err)
					return
				}
				if err := wc.UpdateVMByID(context.Background(), e.master.ID, onegate.KV{Key: kubeconfig.AnswerKey(id), Value: val}); err != nil {
					t.Error(err)
				}
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Error("no request came")
	}()
	return done
}

func loadLoopbackCA(t *testing.T, s *loopback.Server) *credential.CA {
	t.Helper()
	certPEM, _ := os.ReadFile(s.CACertPath())
	keyPEM, _ := os.ReadFile(s.CAKeyPath())
	ca, err := credential.ParseCA(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}
