//go:build realbed

package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/testbed"
	vmcontext "github.com/onekube/onekube/context"
)

// TestAgentMasterPowerCutMidInit cuts the master's power while the real
// kubeadm init runs (manifests written, control plane starting). After the
// reboot fakenode starts those static pods again, as a kubelet would; the
// agent's rerun must reset the half-done node with the real kubeadm reset
// (through the CRI) and initialize a working control plane. A further run
// after success must do nothing.
func TestAgentMasterPowerCutMidInit(t *testing.T) {
	b := newBed(t)
	s := startService(t, b, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var vm *testbed.VM
	var id int
	for vm == nil {
		if ms := s.Sim.RoleVMs(s.ID, "master"); len(ms) > 0 {
			id = ms[0].ID
			vm = s.VM(id)
		}
		if ctx.Err() != nil {
			t.Fatal("the master VM never booted")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// kubeadm writes the etcd manifest about 1 s into init, before
	// wait-control-plane: cut the power then.
	for {
		if _, err := vm.ReadFile("/etc/kubernetes/manifests/etcd.yaml"); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("kubeadm init never wrote the etcd manifest")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := vm.PowerOff(); err != nil {
		t.Fatal(err)
	}
	if ut := s.Sim.UserTemplate(id); ut[vmcontext.KeyReady] == "YES" || ut[vmcontext.KeyPubToken] != "" {
		t.Fatalf("published before init finished: READY=%q, token set %v", ut[vmcontext.KeyReady], ut[vmcontext.KeyPubToken] != "")
	}
	if err := vm.PowerOn(); err != nil {
		t.Fatal(err)
	}
	r, err := s.RunAgain(id)
	if err != nil || r.Code != 0 {
		t.Fatalf("the agent after the reboot: exit %d, %v\n%s", r.Code, err, lastLines(r.Output(), 20))
	}
	if !strings.Contains(r.Output(), "resetting the node") {
		t.Errorf("the rerun did not reset the half-initialized node:\n%s", lastLines(r.Output(), 20))
	}
	ut := s.Sim.UserTemplate(id)
	if ut[vmcontext.KeyReady] != "YES" || ut[vmcontext.KeyPubToken] == "" {
		t.Fatalf("after the rerun: READY=%q, error %q", ut[vmcontext.KeyReady], ut[vmcontext.KeyPubError])
	}
	cfg, err := b.RESTConfig(vm, "/etc/kubernetes/admin.conf")
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	name := ut[vmcontext.KeyPubNodeName]
	waitReady(t, client, map[string]string{name: vm.Spec.IP.String()})
	tokID, _, _ := strings.Cut(ut[vmcontext.KeyPubToken], ".")
	if _, err := client.CoreV1().Secrets("kube-system").Get(ctx, "bootstrap-token-"+tokID, metav1.GetOptions{}); err != nil {
		t.Errorf("the published token after recovery: %v", err)
	}

	// A run after success: exit 0, no kubeadm (which would drive
	// systemctl), the same CA.
	calls, _ := vm.ReadFile("/var/log/systemctl-stub.log")
	ca, _ := vm.ReadFile("/etc/kubernetes/pki/ca.crt")
	again, err := s.RunAgain(id)
	if err != nil || again.Code != 0 {
		t.Fatalf("a run after success: exit %d, %v\n%s", again.Code, err, again.Output())
	}
	calls2, _ := vm.ReadFile("/var/log/systemctl-stub.log")
	ca2, _ := vm.ReadFile("/etc/kubernetes/pki/ca.crt")
	if !bytes.Equal(calls, calls2) || !bytes.Equal(ca, ca2) {
		t.Error("a run after success touched kubeadm's work")
	}
}

// TestAgentJoinRetry: a worker's join is refused (the master's published
// CA hash was wrong when it read it) and reported; once the right hash is
// back, its next run (systemd's Restart=) resets the node with the real
// kubeadm reset, joins, and clears the failure it had reported. (A join
// refused after kubelet-start wrote files, which the retry must reset, is
// TestAgentRealCloud's worker re-bootstrap.)
func TestAgentJoinRetry(t *testing.T) {
	b := newBed(t)
	s := startService(t, b, 0)
	runs := waitAgents(t, s, 1)
	if runs[0].Code != 0 {
		t.Fatalf("master: exit %d\n%s", runs[0].Code, lastLines(runs[0].Output(), 15))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Sim.WaitServiceRunning(ctx); err != nil {
		t.Fatal(err)
	}
	master := s.Sim.RoleVMs(s.ID, "master")[0]
	hash := s.Sim.UserTemplate(master.ID)[vmcontext.KeyPubHash]
	publishAs(t, s, master, vmcontext.KeyPubHash+"="+strings.Repeat("cd", 32))
	if err := s.Sim.Scale(s.ID, "worker", 1); err != nil {
		t.Fatal(err)
	}
	runs = waitAgents(t, s, 2)
	w := runs[1]
	if w.Code == 0 {
		t.Fatal("the worker joined with a wrong CA hash")
	}
	if ut := s.Sim.UserTemplate(w.VM.ID); ut[vmcontext.KeyPubPhase] != "failed" || !strings.Contains(ut[vmcontext.KeyPubError], "kubeadm-join") || ut[vmcontext.KeyReady] == "YES" {
		t.Errorf("after the refused join: READY=%q PHASE=%q ERROR=%q", ut[vmcontext.KeyReady], ut[vmcontext.KeyPubPhase], ut[vmcontext.KeyPubError])
	}
	publishAs(t, s, master, vmcontext.KeyPubHash+"="+hash)
	again, err := s.RunAgain(w.VM.ID)
	if err != nil || again.Code != 0 {
		t.Fatalf("the worker's second run: exit %d, %v\n%s", again.Code, err, lastLines(again.Output(), 20))
	}
	if !strings.Contains(again.Output(), "resetting the node") {
		t.Errorf("the retry did not reset the node first:\n%s", lastLines(again.Output(), 20))
	}
	if ut := s.Sim.UserTemplate(w.VM.ID); ut[vmcontext.KeyReady] != "YES" || ut[vmcontext.KeyPubPhase] != "done" || ut[vmcontext.KeyPubError] != "" {
		t.Errorf("after the retry: READY=%q PHASE=%q ERROR=%q", ut[vmcontext.KeyReady], ut[vmcontext.KeyPubPhase], ut[vmcontext.KeyPubError])
	}
	cfg, err := b.RESTConfig(s.VM(master.ID), "/etc/kubernetes/admin.conf")
	if err != nil {
		t.Fatal(err)
	}
	name := s.Sim.UserTemplate(w.VM.ID)[vmcontext.KeyPubNodeName]
	waitReady(t, kubernetes.NewForConfigOrDie(cfg), map[string]string{name: w.VM.IP.String()})
}
