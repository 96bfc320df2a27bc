//go:build realbed

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/serve/servestatus"
	"github.com/onekube/onekube/agent/testbed"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegatesim"
	"github.com/onekube/onekube/context/protocol"
)

// TestHostileSibling is issue 20's attacker on a real control plane: root
// on a worker of the service, speaking OneGate's real protocol from inside
// its VM (testbed.Attacker) and the Kubernetes API from its own network
// stack. One service, 1 master + 1 worker, under a hardened
// onegate-server.conf (must-hold 6: onekube keeps working), then scaled
// by one worker:
//
//   - the cluster comes up hardened, the master publishes its exposure
//     probe and `onekube-flow status` shows it; the attacker still reads
//     every sibling's CONTEXT, and its sibling write and action get 403;
//   - forging ROLE_NAME=master with the tab bypass, a CP recipient,
//     READY=NO and a join phase on itself, and relabeling its own Node's
//     onekube.io/vm-id with its kubelet credential, earns no grant, no
//     certificate key, no control-plane join and no token (must-holds 1,
//     2, 3, 4);
//   - with the worker token it reads from OneGate while a real VM waits,
//     it cannot read kubeadm-certs (RBAC, must-hold 4), and its CSRs for
//     the master's name and an invented one are denied by serve's CSR
//     approver, while the new worker's own CSR is approved and it joins
//     (issue 20 finding 2).
func TestHostileSibling(t *testing.T) {
	t.Parallel() // mostly waiting: paired with another bed test (make e2e-real, docs/testbed.md)
	b := newBed(t)
	s := startServiceWith(t, b, testbed.ServiceOptions{Workers: 1, CNIManifest: flannelManifest, AgentArgs: agentArgs,
		Sim: onegatesim.Options{Deny: onegatesim.HardenedDeny()}, ServeArgs: hostileServeArgs})
	for _, r := range waitAgents(t, s, 2) {
		if r.Code != 0 || r.Err != nil {
			t.Fatalf("hardened OneGate: VM %d (%s): exit %d (%v):\n%s", r.VM.ID, r.VM.Role, r.Code, r.Err, lastLines(r.Output(), 20))
		}
	}
	master := s.Sim.RoleVMs(s.ID, "master")[0]
	worker := s.Sim.RoleVMs(s.ID, "worker")[0]
	masterName := s.Sim.UserTemplate(master.ID)[vmcontext.KeyPubNodeName]
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cfg, err := b.RESTConfig(s.VM(master.ID), "/etc/kubernetes/admin.conf")
	if err != nil {
		t.Fatal(err)
	}
	admin := kubernetes.NewForConfigOrDie(cfg)

	// Exposure: published by the master, shown by the CLI.
	const exposure = "restricted-bypass=yes update_by_id=no"
	if got := s.Sim.UserTemplate(master.ID)[vmcontext.KeyPubExposure]; got != exposure {
		t.Errorf("%s = %q, want %q", vmcontext.KeyPubExposure, got, exposure)
	}
	if out := flowStatus(t, b, s); !strings.Contains(out, "onegate exposure: "+exposure) {
		t.Errorf("onekube-flow status shows no exposure line:\n%s", out)
	}

	a, err := s.Attacker(worker.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Reads stay open: the master's CONTEXT, through the extended document.
	ext, err := a.ReadExtended(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m := ext.Role("master"); m == nil || len(m.Nodes) != 1 || m.Nodes[0].VM == nil || len(m.Nodes[0].VM.Context) == 0 {
		t.Errorf("the attacker did not read the master's CONTEXT: %+v", m)
	}
	// Sibling writes and actions are off.
	var refused *testbed.OneGateError
	if err := a.Put(ctx, master.ID, vmcontext.KeyPubMaster+"=192.0.2.250", 1); !errors.As(err, &refused) || refused.Status != http.StatusForbidden {
		t.Errorf("a sibling write under a hardened conf: %v, want 403", err)
	}
	if err := a.Action(ctx, master.ID, "poweroff"); !errors.As(err, &refused) || refused.Status != http.StatusForbidden {
		t.Errorf("a sibling action under a hardened conf: %v, want 403", err)
	}

	// The forgery: on its own template, which no configuration closes,
	// and on its own Node: its kubelet's credential may relabel it
	// (NodeRestriction allows a node its own onekube.io labels), so the
	// label no longer names its VM. serve must still know the VM joined,
	// by the Node's immutable provider ID.
	id, _ := age.GenerateX25519Identity()
	forgedAt := time.Now().Add(-time.Second)
	workerName := s.Sim.UserTemplate(worker.ID)[vmcontext.KeyPubNodeName]
	relabel := func(vmid int) {
		if out, err := a.Run(ctx, "kubectl", "--kubeconfig", "/etc/kubernetes/kubelet.conf", "--request-timeout", "20s",
			"label", "node", workerName, fmt.Sprintf("%s=%d", kubeadm.LabelVMID, vmid), "--overwrite"); err != nil {
			t.Fatalf("the attacker relabeling its Node with its kubelet credential: %v\n%s", err, out)
		}
	}
	relabel(999)
	phase := s.Sim.UserTemplate(worker.ID)[vmcontext.KeyPubPhase]
	if err := a.Publish(ctx, onegatesim.BypassSpelling(vmcontext.KeyRoleName, "master"), vmcontext.KeyPubRecipient+"="+id.Recipient().String(),
		vmcontext.KeyReady+"=NO", vmcontext.KeyPubPhase+"="+protocol.PhaseWaitCertKey); err != nil {
		t.Fatal(err)
	}
	if got := s.Sim.UserTemplate(worker.ID)[vmcontext.KeyRoleName]; got != "master" {
		t.Fatalf("the tab bypass did not set ROLE_NAME (%q): the bed's OneGate is not the real one", got)
	}
	// serve has looked at the forgery: two ticks each of the loops that
	// grant certificate keys and mint tokens, begun after it.
	looked := time.Now()
	waitServeTicks(t, s.VM(master.ID), looked, 2, "controlplane", "tokens")
	t.Logf("serve's loops ticked twice after the forgery within %s", time.Since(looked).Round(100*time.Millisecond))
	for _, vm := range s.Sim.VMs() {
		if v := s.Sim.UserTemplate(vm.ID)[vmcontext.KeyPubCertKey]; v != "" {
			t.Errorf("VM %d carries a certificate-key grant after the forgery", vm.ID)
		}
	}
	if w := s.Sim.UserTemplate(master.ID)[vmcontext.KeyPubWaiting]; strings.Contains(" "+w+" ", fmt.Sprintf(" %d ", worker.ID)) {
		t.Errorf("serve counts the forger as waiting to join: %s=%q", vmcontext.KeyPubWaiting, w)
	}
	secrets, err := admin.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{FieldSelector: "type=bootstrap.kubernetes.io/token"})
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range secrets.Items {
		if sec.CreationTimestamp.After(forgedAt) {
			t.Errorf("a bootstrap token was minted after the forgery (created %s)", sec.CreationTimestamp.UTC().Format(time.RFC3339)) // its name holds the token ID
		}
	}
	cps, err := admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "node-role.kubernetes.io/control-plane"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cps.Items) != 1 || cps.Items[0].Name != masterName {
		t.Errorf("control-plane nodes after the forgery: %d (want only %s)", len(cps.Items), masterName)
	}
	// The attacker tidies up, so OneFlow sees its READY again.
	relabel(worker.ID)
	if err := a.Publish(ctx, vmcontext.KeyReady+"=YES", vmcontext.KeyPubPhase+"="+phase); err != nil {
		t.Fatal(err)
	}

	// A real VM waits: the token is in OneGate, and the attacker reads it.
	// It is there only while the VM waits (9-12 s), so the attacker reads
	// without pause from before the scale. Its reads once timed out
	// connecting for 20 s while the others' went through: the switch's MAC
	// had moved under its ARP cache as the new VM booted (now fixed,
	// TestBedSwitchKeepsItsAddress).
	stolen := make(chan string, 1)
	readCtx, stopReading := context.WithTimeout(ctx, 2*time.Minute)
	defer stopReading()
	reads, readErrs := 0, []error{}
	go func() {
		defer close(stolen)
		for readCtx.Err() == nil {
			vm, err := a.ReadVM(readCtx, master.ID)
			reads++
			if err != nil {
				readErrs = append(readErrs, err)
				time.Sleep(100 * time.Millisecond)
				continue
			}
			if tok := vm.UserTemplate[vmcontext.KeyPubToken]; tok != "" {
				stolen <- tok
				return
			}
		}
	}()
	if err := s.Sim.Scale(s.ID, "worker", 2); err != nil {
		t.Fatal(err)
	}
	token, ok := <-stolen
	if !ok {
		// reads and readErrs are the reader's, which has ended.
		t.Fatalf("the attacker read no join token in 2 min: %d reads of VM %d, %d failed (last: %v)", reads, master.ID, len(readErrs), vmcontext.MaskTokens(fmt.Sprint(errors.Join(readErrs[max(0, len(readErrs)-1):]...))))
	}
	// The token goes into a 0600 kubeconfig in the VM, never onto a
	// command line that an error message would repeat.
	kc := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://%s:6443', insecure-skip-tls-verify: true}}]\n"+
		"users: [{name: u, user: {token: '%s'}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n", master.IP, token)
	if err := a.VM.WriteFile("/root/stolen.conf", []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl := func(args ...string) (string, error) {
		return a.Run(ctx, "kubectl", append([]string{"--kubeconfig", "/root/stolen.conf", "--request-timeout", "20s"}, args...)...)
	}
	// can-i prints a warning first for a cluster-scoped resource.
	answer := func(out string) string {
		f := strings.Fields(out)
		if len(f) == 0 {
			return ""
		}
		return f[len(f)-1]
	}
	if out, err := kubectl("auth", "can-i", "get", "secret/kubeadm-certs", "-n", "kube-system"); err == nil || answer(out) != "no" {
		t.Errorf("a worker token may read kubeadm-certs (can-i): %q %v", out, err)
	}
	if out, err := kubectl("get", "secret", "kubeadm-certs", "-n", "kube-system"); err == nil || !strings.Contains(out, "Forbidden") {
		t.Errorf("a worker token reading kubeadm-certs: %q %v, want Forbidden", out, err)
	}
	if out, err := kubectl("auth", "can-i", "create", "certificatesigningrequests", "--subresource", "nodeclient"); err == nil || answer(out) != "no" {
		t.Errorf("a worker token is auto-approved (can-i create certificatesigningrequests/nodeclient): %q %v", out, err)
	}
	var forged []string
	for _, name := range []string{masterName, "evil-99"} {
		manifest := csrManifest(t, "hostile-"+name, name)
		if err := a.VM.WriteFile("/tmp/csr.json", manifest, 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := kubectl("create", "-f", "/tmp/csr.json"); err != nil {
			t.Fatalf("filing a CSR for %s with the worker token: %v\n%s", name, err, out)
		}
		forged = append(forged, "hostile-"+name)
	}
	filed := time.Now()

	runs := waitAgents(t, s, 3)
	newWorker := runs[len(runs)-1]
	if newWorker.Code != 0 {
		t.Fatalf("the new worker %d: exit %d:\n%s", newWorker.VM.ID, newWorker.Code, lastLines(newWorker.Output(), 20))
	}
	newName := s.Sim.UserTemplate(newWorker.VM.ID)[vmcontext.KeyPubNodeName]
	var approved bool
	list, err := admin.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list.Items {
		for _, cond := range c.Status.Conditions {
			if cond.Type == certificatesv1.CertificateApproved && cond.Reason == "OnekubeExpectedVM" && strings.Contains(cond.Message, newName) {
				approved = true
			}
		}
	}
	if !approved {
		t.Errorf("no CSR of %s approved by serve's approver", newName)
	}
	// The forged ones: never approved, denied once the grace is over.
	defer func() {
		t.Logf("the forged CSRs were denied within %s of filing", time.Since(filed).Round(100*time.Millisecond))
	}()
	waitUntil(t, 90*time.Second, "the forged CSRs denied", func() bool {
		denied := 0
		for _, n := range forged {
			c, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, cond := range c.Status.Conditions {
				switch cond.Type {
				case certificatesv1.CertificateApproved:
					t.Fatalf("CSR %s (node name of someone else) approved: %s", n, cond.Message)
				case certificatesv1.CertificateDenied:
					denied++
				}
			}
		}
		return denied == len(forged)
	})
}

// hostileServeArgs shorten serve's idle ticks, so that waitServeTicks
// sees its loops look at the forgery within seconds, and the CSR
// approver's denial grace (a minute in production, for a service read
// that predates a VM just created): the forged CSRs name no VM the
// cluster expects, whatever the grace.
var hostileServeArgs = []string{"--controlplane-idle", "2s", "--tokens-idle", "2s", "--csr-grace", "5s"}

// waitServeTicks waits until each of serve's loops named has finished n
// ticks without error, each begun after since, as serve's status file on
// vm shows them (written every 10 s: a tick it skips is not counted).
func waitServeTicks(t *testing.T, vm *testbed.VM, since time.Time, n int, loops ...string) {
	t.Helper()
	seen := map[string][]time.Time{} // per loop, the starts of its counted ticks
	deadline := time.Now().Add(2 * time.Minute)
	for {
		raw, err := vm.ReadFile(servestatus.StatusFile)
		var st servestatus.Status
		if err == nil {
			err = json.Unmarshal(raw, &st)
		}
		done := err == nil
		for _, name := range loops {
			ls := st.Loops[name]
			starts := seen[name]
			if !ls.Running && ls.LastError == "" && ls.TickStarted.After(since) && !ls.TickEnded.Before(ls.TickStarted) &&
				(len(starts) == 0 || ls.TickStarted.After(starts[len(starts)-1])) {
				seen[name] = append(starts, ls.TickStarted)
			}
			done = done && len(seen[name]) >= n
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			var shown []string
			for _, name := range loops {
				ls := st.Loops[name]
				shown = append(shown, fmt.Sprintf("%s: started %s ended %s running %v error %q", name, ls.TickStarted.Format(time.RFC3339Nano),
					ls.TickEnded.Format(time.RFC3339Nano), ls.Running, vmcontext.MaskTokens(ls.LastError)))
			}
			t.Fatalf("serve's loops did not finish %d ticks each begun after %s (counted %v); status file: %v\n%s", n, since.Format(time.RFC3339Nano), seen, err, strings.Join(shown, "\n"))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// flowStatus runs `onekube-flow status` from the switch (the user's
// machine) against the simulator's oned and OneFlow.
func flowStatus(t *testing.T, b *testbed.Bed, s *testbed.Service) string {
	t.Helper()
	code, out, errs := onSwitch(t, b, flowEnv(t, b, s), onekubeFlow(t), "status", fmt.Sprint(s.ID))
	if code != 0 {
		t.Errorf("onekube-flow status exited %d:\n%s%s", code, out, errs)
	}
	return out
}

// csrManifest is a kubelet client CSR for node, as kubectl create reads it.
func csrManifest(t *testing.T, name, node string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	csr := certificatesv1.CertificateSigningRequest{
		TypeMeta:   metav1.TypeMeta{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
	b, err := json.Marshal(csr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitRun waits for the first agent run of VM vmid to finish.
func waitRun(t *testing.T, s *testbed.Service, vmid int) *testbed.AgentRun {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		for _, r := range s.Runs() {
			if r.VM.ID == vmid {
				<-r.Done()
				return r
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("VM %d never ran its agent", vmid)
	return nil
}
