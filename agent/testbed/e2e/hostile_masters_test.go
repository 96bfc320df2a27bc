//go:build realbed

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/OpenNebula/one/src/oca/go/src/goca"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/onekube/onekube/agent/certgrant"
	"github.com/onekube/onekube/agent/etcdm"
	"github.com/onekube/onekube/agent/testbed"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/kubeconfig"
	"github.com/onekube/onekube/context/onegatesim"
	"github.com/onekube/onekube/context/protocol"
	"github.com/onekube/onekube/flow"
)

// hostileHA is the shared service of TestHostileMasters and what its
// steps remember.
type hostileHA struct {
	b       *testbed.Bed
	s       *testbed.Service
	masters []onegatesim.VMInfo // lowest ID first
	worker  onegatesim.VMInfo
	a       *testbed.Attacker
	// id is the attacker's own age identity: nothing may be sealed to it.
	id  *age.X25519Identity
	env []string // onekube-flow's environment on the user's machine
}

// TestHostileMasters is issue 20's attacker (root on the worker, speaking
// OneGate from inside its VM, default onegate-server.conf: sibling
// writes and actions allowed) against the masters of one real service, 1
// master and a worker, scaled to 3 masters; the steps run in order on
// that one cluster:
//
//   - kubeconfig (must-hold 5): a listed user asking above its maximum
//     role is refused, by the CLI and, for a request the attacker writes
//     without the CLI, by the master; the attacker rewrites a pending request's lifetime
//     and role through OneGate and `onekube-flow kubeconfig` refuses;
//   - redirected join (must-hold 1, finding 3): the attacker writes its
//     own address and the hash of its own CA over the master's join data
//     and listens on the API port; a worker scaled up joins the real
//     cluster, nothing connects to the attacker, serve restores the data
//     (hostile_redirect_test.go);
//   - HA grant (must-hold 3, finding 1): while two masters join
//     (which the attacker called workers with a forged ROLE_NAME before
//     they booted: they still join as masters, must-hold 2),
//     the attacker publishes its own recipient, READY=NO, a join phase
//     and ROLE_NAME=master (tab bypass), presents its recipient on its
//     own port 6445, and writes its recipient over each joiner's for 6 s:
//     nothing is sealed to it, the real masters join, no etcd member is
//     removed;
//   - a powered-off master, a forged recipient and join request written
//     on it by the attacker: no etcd member removed, no grant;
//   - all masters recreated at once (must-hold 7), the attacker erasing
//     what they published: no master runs kubeadm init, the refusal is
//     published in OneGate and `onekube-flow status` shows it.
func TestHostileMasters(t *testing.T) {
	t.Parallel() // mostly waiting: paired with another bed test (make e2e-real, docs/testbed.md)
	b := newBed(t)
	s := startServiceWith(t, b, testbed.ServiceOptions{Masters: 1, MaxMasters: 3, Workers: 1, CNIManifest: flannelManifest, AgentArgs: agentArgs,
		// Two steps scale: the second waits out the first's cooldown.
		Cooldown: 5 * time.Second})
	for _, r := range waitAgents(t, s, 2) {
		if r.Code != 0 || r.Err != nil {
			t.Fatalf("VM %d (%s): exit %d (%v):\n%s", r.VM.ID, r.VM.Role, r.Code, r.Err, lastLines(r.Output(), 20))
		}
	}
	h := &hostileHA{b: b, s: s, masters: sortedMasters(s), worker: s.Sim.RoleVMs(s.ID, flow.RoleWorker)[0]}
	var err error
	if h.a, err = s.Attacker(h.worker.ID); err != nil {
		t.Fatal(err)
	}
	if h.id, err = age.GenerateX25519Identity(); err != nil {
		t.Fatal(err)
	}
	h.env = userMachine(t, b, s)
	steps := []struct {
		name string
		run  func(*hostileHA, *testing.T)
	}{
		{"kubeconfig: max role, rewritten request", (*hostileHA).kubeconfig},
		{"redirected join: forged master address and CA pin", (*hostileHA).redirectedJoin},
		{"HA grant only to the joining master", (*hostileHA).haGrant},
		{"powered-off master, forged request", (*hostileHA).poweredOff},
		{"all masters recreated at once", (*hostileHA).allRecreated},
	}
	for _, st := range steps {
		start := time.Now()
		ok := t.Run(st.name, func(t *testing.T) { st.run(h, t) })
		t.Logf("step %q took %s", st.name, time.Since(start).Round(100*time.Millisecond))
		if !ok {
			t.Fatalf("stopping: the steps after %q start from the state it leaves", st.name)
		}
	}
}

func sortedMasters(s *testbed.Service) []onegatesim.VMInfo {
	ms := s.Sim.RoleVMs(s.ID, flow.RoleMaster)
	sort.Slice(ms, func(i, j int) bool { return ms[i].ID < ms[j].ID })
	return ms
}

// userMachine serves oned and OneFlow on the switch for onekube-flow, run
// there as oneadmin, and returns its environment.
func userMachine(t *testing.T, b *testbed.Bed, s *testbed.Service) []string {
	t.Helper()
	return flowEnv(t, b, s)
}

func (h *hostileHA) home() string { return strings.TrimPrefix(h.env[0], "HOME=") }

func (h *hostileHA) cli(t *testing.T, args ...string) (int, string, string) {
	return onSwitch(t, h.b, h.env, onekubeFlow(t), args...)
}

// keyFile writes a fresh age identity for the CLI and returns its path
// and recipient.
func (h *hostileHA) keyFile(t *testing.T, name string) (string, string) {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(h.home(), name+".key")
	if err := os.WriteFile(p, []byte(id.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, id.Recipient().String()
}

// rewriter is the attacker watching every master's USER_TEMPLATE through
// OneGate and rewriting each request not yet proved (PROOF "-") to
// cluster-admin for 7 days (the most a master signs), once. It returns how many it rewrote, once
// stopped.
func (h *hostileHA) rewriter(ctx context.Context) func() int {
	ctx, cancel := context.WithCancel(ctx)
	var n atomic.Int32
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		done := map[string]bool{}
		for ctx.Err() == nil {
			for _, m := range h.masters {
				vm, err := h.a.ReadVM(ctx, m.ID)
				if err != nil {
					continue
				}
				for k, v := range vm.UserTemplate {
					f := strings.Fields(v)
					if !strings.HasPrefix(k, vmcontext.KeyPubKubeconfigRequest) || len(f) != 6 || f[4] != "-" || done[k] {
						continue
					}
					forged := fmt.Sprintf("%s %s cluster-admin 604800 - %s", f[0], f[1], f[5])
					if h.a.Put(ctx, m.ID, k+`="`+forged+`"`, 1) == nil {
						done[k] = true
						n.Add(1)
					}
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return func() int { cancel(); wg.Wait(); return int(n.Load()) }
}

// kubeconfig: bob is listed with no maximum (view) and asks for
// cluster-admin: refused, by his CLI and, for the same request written
// straight onto the master, by the master. Then the attacker rewrites oneadmin's one-minute
// request to 7 days, and its view request to cluster-admin: the master
// challenges what it read, and the CLI refuses both and writes nothing.
// No binding for bob exists.
func (h *hostileHA) kubeconfig(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	adminKey, adminRcpt := h.keyFile(t, "oneadmin")
	bobKey, bobRcpt := h.keyFile(t, "bob")
	users := "oneadmin:" + adminRcpt + ":cluster-admin;bob:" + bobRcpt
	hc := &http.Client{Transport: &http.Transport{DialContext: h.b.DialContext}}
	one := goca.NewClient(goca.NewConfig("oneadmin", "pw", "http://"+onedAddr+"/RPC2"), hc)
	for _, m := range h.masters {
		if _, err := one.CallContext(ctx, "one.vm.updateconf", m.ID, "CONTEXT = [ "+vmcontext.KeyKubeconfigUsers+` = "`+users+`" ]`, 1); err != nil {
			t.Fatal(err)
		}
	}
	svc := fmt.Sprint(h.s.ID)
	common := []string{"kubeconfig", svc, "--poll", "200ms", "--timeout", "60s", "--store-key=false"}

	start := time.Now()
	code, out, stderr := h.cli(t, append(common, "--identity", bobKey, "--as", "bob", "--role", "cluster-admin")...)
	t.Logf("bob asking above his maximum: exit %d after %s: %s", code, time.Since(start).Round(time.Millisecond), lastLines(stderr, 1))
	if code == 0 || out != "" || !strings.Contains(stderr, "at most the view role") {
		t.Errorf("bob (view at most) got cluster-admin: exit %d\n%s", code, stderr)
	}
	// bob's CLI refused before asking; the master must refuse too, for a
	// request written without the CLI (bob's own tool, or a sibling's).
	h.directAboveMax(t, ctx, bobRcpt)

	stop := h.rewriter(ctx)
	start = time.Now()
	code, _, stderr = h.cli(t, append(common, "--identity", adminKey, "--as", "oneadmin", "--merge", "--ttl", "1m")...)
	t.Logf("oneadmin's rewritten request: exit %d after %s: %s", code, time.Since(start).Round(time.Millisecond), lastLines(stderr, 1))
	if code == 0 || !strings.Contains(stderr, "rewrote") {
		t.Errorf("onekube-flow accepted a rewritten request (1 m asked):\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(h.home(), ".kube", "config")); err == nil {
		t.Error("a kubeconfig was written for the rewritten request")
	}
	code, out, stderr = h.cli(t, append(common, "--identity", adminKey, "--as", "oneadmin", "--role", "view", "--ttl", "10m")...)
	t.Logf("oneadmin's view request rewritten: exit %d: %s", code, lastLines(stderr, 1))
	if code == 0 || out != "" || !strings.Contains(stderr, "rewrote") {
		t.Errorf("onekube-flow accepted a request rewritten from view to cluster-admin:\n%s", stderr)
	}
	if n := stop(); n < 2 {
		t.Fatalf("the attacker rewrote %d requests, want 2: the step proves nothing", n)
	}
	admin := adminClient(t, h.b, h.s.VM(h.masters[0].ID))
	crbs, err := admin.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crbs.Items {
		if strings.Contains(c.Name, "bob") && strings.Contains(c.Name, "cluster-admin") {
			t.Errorf("binding %s exists", c.Name)
		}
	}
}

// directAboveMax writes, from the attacker VM through OneGate, a request
// for bob as cluster-admin on the first master, with bob's recipient: the
// master must answer with a refusal naming bob's maximum, not a challenge.
func (h *hostileHA) directAboveMax(t *testing.T, ctx context.Context, bobRcpt string) {
	t.Helper()
	id, err := kubeconfig.NewID(nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := kubeconfig.Request{Name: "bob", Role: kubeconfig.RoleClusterAdmin, TTL: time.Hour, Recipient: bobRcpt}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	m := h.masters[0].ID
	if err := h.a.Put(ctx, m, kubeconfig.RequestKey(id)+`="`+v+`"`, 1); err != nil {
		t.Fatal(err)
	}
	var a kubeconfig.Answer
	waitUntil(t, time.Minute, "the master's answer to bob's direct cluster-admin request", func() bool {
		raw := h.s.Sim.UserTemplate(m)[kubeconfig.AnswerKey(id)]
		a, err = kubeconfig.ParseAnswer(raw)
		return raw != "" && err == nil
	})
	if a.Challenge || a.Sealed != "" || !strings.Contains(a.Reason, "at most the view role") {
		t.Errorf("master VM %d answered bob's direct cluster-admin request (view at most) with challenge=%v sealed=%v reason %q, want a refusal",
			m, a.Challenge, a.Sealed != "", a.Reason)
	}
	_ = h.a.Put(ctx, m, kubeconfig.RequestKey(id), 2)
}

// sealedToAttacker fails the test if any VM carries a grant the
// attacker's identity opens or that names its recipient, and returns the
// VMs granted to.
func (h *hostileHA) sealedToAttacker(t *testing.T) []int {
	t.Helper()
	var to []int
	for _, vm := range h.s.Sim.VMs() {
		v := h.s.Sim.UserTemplate(vm.ID)[vmcontext.KeyPubCertKey]
		if v == "" {
			continue
		}
		g, err := certgrant.Parse(v)
		if err != nil {
			continue
		}
		if g.Recipient == h.id.Recipient().String() || g.VMID == h.worker.ID {
			t.Fatalf("VM %d granted the certificate key to the attacker (VM %d, %s)", vm.ID, g.VMID, g.Recipient)
		}
		if _, err := g.Open(h.id); err == nil {
			t.Fatalf("the attacker opens VM %d's grant", vm.ID)
		}
		to = append(to, g.VMID)
	}
	return to
}

func memberSet(t *testing.T, ctx context.Context, ec *etcdm.Client) map[string]bool {
	t.Helper()
	ms, err := ec.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range ms {
		out[fmt.Sprintf("%x", m.ID)] = true
	}
	return out
}

// hijacker is the attacker watching the masters through OneGate: the
// moment a joining master publishes its recipient, it writes its own
// there instead (a sibling write), leaves it for three of serve's busy
// ticks, then puts the joiner's back so that the join can go on. It
// returns how many it rewrote, once stopped.
func (h *hostileHA) hijacker(ctx context.Context) func() int {
	ctx, cancel := context.WithCancel(ctx)
	var n atomic.Int32
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		done := map[int]bool{}
		mine := h.id.Recipient().String()
		for ctx.Err() == nil {
			for _, m := range sortedMasters(h.s) {
				if done[m.ID] {
					continue
				}
				vm, err := h.a.ReadVM(ctx, m.ID)
				if err != nil {
					continue
				}
				r := vm.UserTemplate[vmcontext.KeyPubRecipient]
				if r == "" || r == mine {
					continue
				}
				if h.a.Put(ctx, m.ID, vmcontext.KeyPubRecipient+"="+mine, 1) != nil {
					continue
				}
				done[m.ID] = true
				n.Add(1)
				select {
				case <-ctx.Done():
				case <-time.After(6 * time.Second):
				}
				_ = h.a.Put(context.Background(), m.ID, vmcontext.KeyPubRecipient+"="+r, 1)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return func() int { cancel(); wg.Wait(); return int(n.Load()) }
}

// haGrant: the attacker asks to join the control plane as loudly as it
// can while two real masters join, and rewrites their requests to its
// own recipient for a while.
func (h *hostileHA) haGrant(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ec := etcdClient(t, h.b, h.s, h.masters)
	before := memberSet(t, ctx, ec)
	if len(before) != 1 {
		t.Fatalf("etcd members before: %v, want 1", before)
	}
	ln, err := h.a.Listen("tcp", fmt.Sprintf(":%d", certgrant.PresentPort))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = certgrant.Serve(ctx, ln, certgrant.Presentation{VMID: h.worker.ID, Recipient: h.id.Recipient().String()})
	}()
	if err := h.a.Publish(ctx, onegatesim.BypassSpelling(vmcontext.KeyRoleName, flow.RoleMaster),
		vmcontext.KeyPubRecipient+"="+h.id.Recipient().String(), vmcontext.KeyReady+"=NO",
		vmcontext.KeyPubPhase+"="+protocol.PhaseWaitCertKey); err != nil {
		t.Fatal(err)
	}
	if got := h.s.Sim.UserTemplate(h.worker.ID)[vmcontext.KeyRoleName]; got != flow.RoleMaster {
		t.Fatalf("the tab bypass did not set ROLE_NAME (%q)", got)
	}
	stop := h.hijacker(ctx)
	start := time.Now()
	if err := h.s.Sim.Scale(h.s.ID, flow.RoleMaster, 3); err != nil {
		t.Fatal(err)
	}
	// Before they boot, the attacker calls the new masters workers (a
	// sibling write of ROLE_NAME, tab bypass): each must still join as
	// the master OneFlow's roles[].nodes says it is (must-hold 2).
	for _, m := range sortedMasters(h.s)[1:] {
		if err := h.a.Put(ctx, m.ID, onegatesim.BypassSpelling(vmcontext.KeyRoleName, flow.RoleWorker), 1); err != nil {
			t.Fatalf("the attacker writing ROLE_NAME on VM %d: %v", m.ID, err)
		}
		if got := h.s.Sim.UserTemplate(m.ID)[vmcontext.KeyRoleName]; got != flow.RoleWorker {
			t.Fatalf("the tab bypass did not set VM %d's ROLE_NAME (%q)", m.ID, got)
		}
	}
	defer func() { t.Logf("the attacker rewrote %d joining masters' recipients", stop()) }()
	granted := map[int]bool{}
	waitUntil(t, 5*time.Minute, "two masters to join", func() bool {
		for _, id := range h.sealedToAttacker(t) {
			granted[id] = true
		}
		ms := sortedMasters(h.s)
		if len(ms) < 3 {
			return false
		}
		joined := 0
		for _, r := range h.s.Runs() {
			if r.VM.Role != flow.RoleMaster || r.VM.ID == ms[0].ID {
				continue
			}
			select {
			case <-r.Done():
				if r.Code != 0 {
					t.Fatalf("master %d: exit %d:\n%s", r.VM.ID, r.Code, lastLines(r.Output(), 20))
				}
				joined++
			default:
			}
		}
		return joined == 2
	})
	t.Logf("two masters joined %s after the scale; grants seen for VMs %v", time.Since(start).Round(100*time.Millisecond), granted)
	h.sealedToAttacker(t)
	h.masters = sortedMasters(h.s)
	after := memberSet(t, ctx, etcdClient(t, h.b, h.s, h.masters))
	for id := range before {
		if !after[id] {
			t.Errorf("etcd member %s removed during the join (before %v, after %v)", id, before, after)
		}
	}
	if len(after) != 3 {
		t.Errorf("etcd members after: %v, want 3", after)
	}
	admin := adminClient(t, h.b, h.s.VM(h.masters[0].ID))
	cps, err := admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "node-role.kubernetes.io/control-plane"})
	if err != nil {
		t.Fatal(err)
	}
	wname := h.s.Sim.UserTemplate(h.worker.ID)[vmcontext.KeyPubNodeName]
	for _, n := range cps.Items {
		if n.Name == wname {
			t.Errorf("the attacker's node %s is a control-plane node", wname)
		}
	}
	if len(cps.Items) != 3 {
		t.Errorf("%d control-plane nodes, want 3", len(cps.Items))
	}
}

// poweredOff: the attacker powers off the third master through OneGate
// (the bed's power cut gives the action effect; oned still shows it
// RUNNING until it notices) and writes a join request on it with its own
// recipient. Its etcd member stays, and nothing is granted.
func (h *hostileHA) poweredOff(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	third := h.masters[2]
	ec := etcdClient(t, h.b, h.s, h.masters)
	before := memberSet(t, ctx, ec)
	if err := h.a.Action(ctx, third.ID, "poweroff"); err != nil {
		t.Fatal(err)
	}
	if err := h.s.VM(third.ID).PowerOff(); err != nil {
		t.Fatal(err)
	}
	forged := strings.Join([]string{vmcontext.KeyPubRecipient + "=" + h.id.Recipient().String(), vmcontext.KeyReady + "=NO",
		vmcontext.KeyPubPhase + "=" + protocol.PhaseWaitCertKey}, "\n")
	if err := h.a.Put(ctx, third.ID, forged, 1); err != nil {
		t.Fatal(err)
	}
	// Longer than serve's staleness bar (3 failed health checks over 15 s)
	// at its 2 s busy tick.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		h.sealedToAttacker(t)
		time.Sleep(time.Second)
	}
	after := memberSet(t, ctx, ec)
	for id := range before {
		if !after[id] {
			t.Errorf("etcd member %s removed on a forged request (before %v, after %v)", id, before, after)
		}
	}
}

// allRecreated: every master recreated at once (fresh disks, same IDs,
// STIME from a deployment 3 h ago), and the attacker erases what they
// published, so no key shows there was a cluster. No master runs kubeadm
// init; the initialiser's refusal, naming --new-cluster, is published and
// shown by `onekube-flow status`.
func (h *hostileHA) allRecreated(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, m := range h.masters {
		if err := h.s.Sim.SetCreated(m.ID, time.Now().Add(-3*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	// All down at once (a host lost, say); the attacker erases while they
	// are down, then each comes back on a fresh disk.
	for _, m := range h.masters {
		if err := h.s.VM(m.ID).PowerOff(); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range h.masters {
		vm, err := h.a.ReadVM(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{vmcontext.KeyPubMaster, vmcontext.KeyPubToken, vmcontext.KeyPubHash, vmcontext.KeyReady} {
			if _, ok := vm.UserTemplate[k]; !ok {
				continue // erasing an absent key is a 500
			}
			if err := h.a.Put(ctx, m.ID, k, 2); err != nil {
				t.Fatalf("erasing %s on VM %d: %v", k, m.ID, err)
			}
		}
	}
	for _, m := range h.masters {
		if err := h.s.VM(m.ID).Recreate(); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	defer func() {
		if t.Failed() || time.Since(start) > 20*time.Second {
			for _, r := range h.s.Runs() {
				t.Logf("VM %d's last agent run:\n%s", r.VM.ID, lastLines(r.Output(), 40))
			}
		}
	}()
	runs := make([]*testbed.AgentRun, len(h.masters))
	var wg sync.WaitGroup
	for i, m := range h.masters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i], _ = h.s.RunAgain(m.ID, "--master-timeout", "20s")
		}()
	}
	wg.Wait()
	t.Logf("the recreated masters' agents ended after %s", time.Since(start).Round(100*time.Millisecond))
	for i, m := range h.masters {
		r := runs[i]
		if r == nil || r.Code == 0 {
			t.Errorf("recreated master %d: bootstrap succeeded", m.ID)
		} else {
			t.Logf("recreated master %d: exit %d after %s: %s", m.ID, r.Code, r.End.Sub(r.Start).Round(100*time.Millisecond), lastLines(r.Output(), 1))
		}
		if d := diskOf(t, h.s.VM(m.ID)); d.Files != 0 || strings.Contains(d.Systemctl, "kubelet") {
			t.Errorf("kubeadm ran on recreated master %d: %d files; systemctl calls:\n%s", m.ID, d.Files, d.Systemctl)
		}
		dctx, dcancel := context.WithTimeout(ctx, 3*time.Second)
		if c, err := h.b.DialContext(dctx, "tcp", fmt.Sprintf("%s:6443", m.IP)); err == nil {
			c.Close()
			t.Errorf("an API server answers on recreated master %d", m.ID)
		}
		dcancel()
	}
	first := h.masters[0]
	ut := h.s.Sim.UserTemplate(first.ID)
	// "was created": the STIME check refused, not the published keys (erased).
	if ut[vmcontext.KeyPubPhase] != "failed" || !strings.Contains(ut[vmcontext.KeyPubError], "--new-cluster") || !strings.Contains(ut[vmcontext.KeyPubError], "was created") {
		t.Errorf("VM %d published PHASE=%q ERROR=%q, want the refusal naming --new-cluster", first.ID, ut[vmcontext.KeyPubPhase], ut[vmcontext.KeyPubError])
	}
	// The table cuts an error to 60 characters; --json has it whole.
	code, out, errs := h.cli(t, "status", fmt.Sprint(h.s.ID))
	t.Logf("onekube-flow status (exit %d):\n%s%s", code, out, errs)
	if !strings.Contains(out, "refusing to touch this node: VM "+fmt.Sprint(first.ID)) {
		t.Errorf("onekube-flow status does not show the refusal")
	}
	if _, js, _ := h.cli(t, "status", "--json", fmt.Sprint(h.s.ID)); !strings.Contains(js, "onekube-agent bootstrap --new-cluster") {
		t.Errorf("onekube-flow status --json does not name --new-cluster:\n%s", js)
	}
}
