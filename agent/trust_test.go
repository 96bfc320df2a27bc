package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// Tests of issue 8 §4 (trust nothing OneGate does not vouch for), §5
// (bounded everywhere), §6 (secrets) and §7 (inputs that mean one thing).

// TestWorkerStopsWhenMasterFailed: a worker does not wait out its timeout
// for a master that reported PHASE=failed; the master's reason is named.
func TestWorkerStopsWhenMasterFailed(t *testing.T) {
	og := newService(8, []int{3}, []int{8})
	og.beforeGetVMByID = func(f *fakeOneGate, id, n int) {
		if n == 4 {
			f.vms[3].UserTemplate[vmcontext.KeyPubPhase] = PhaseFailed
			f.vms[3].UserTemplate[vmcontext.KeyPubError] = "phase kubeadm-init: kubeadm init exited 1: (ERROR CRI): level=fatal"
		}
	}
	h := newHarness(t, og)
	err := h.run()
	if !errors.Is(err, ErrMasterFailed) || !strings.Contains(err.Error(), "VM 3 reported ONEGATE_K8S_PHASE=failed") || !strings.Contains(err.Error(), "level=fatal") {
		t.Fatalf("err = %v", err)
	}
	if elapsed := h.clock.Now().Sub(testEpoch); elapsed > 2*time.Minute {
		t.Errorf("gave up after %s of waiting", elapsed)
	}
	if h.kadm.count("join") != 0 {
		t.Error("joined a failed master")
	}
}

// TestWorkerRereadsServiceOnLongWait: the master VM is replaced while a
// worker waits; the worker finds the new one by reading the service again.
func TestWorkerRereadsServiceOnLongWait(t *testing.T) {
	og := newService(8, []int{3}, []int{8})
	og.vms[5] = &onegate.VM{ID: 5, UserTemplate: map[string]string{vmcontext.KeyRoleName: "master", vmcontext.KeyServiceID: "7"},
		NICs: []onegate.NIC{{IP: vmIP(5)}}}
	og.publishMasterData(5, goodToken, goodHash)
	replaced := false
	og.beforeGetVMByID = func(f *fakeOneGate, id, n int) {
		if !replaced && n == 3 {
			// VM 3 is deleted and OneFlow creates VM 5 in its place.
			f.service.Roles[0].Nodes = []onegate.Node{{VMID: 5}}
			replaced = true
		}
	}
	h := newHarness(t, og)
	if err := h.run(); err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, h.logs)
	}
	if og.calls["GetService"] < 2 || !strings.Contains(h.kadm.configs["join"], vmIP(5)+":6443") {
		t.Errorf("service read %d times; join config:\n%s", og.calls["GetService"], h.kadm.configs["join"])
	}
	if elapsed := h.clock.Now().Sub(testEpoch); elapsed < serviceRefresh || elapsed > serviceRefresh+2*time.Minute {
		t.Errorf("found the new master after %s, want about %s", elapsed, serviceRefresh)
	}
}

// TestSiblingRewritesMasterKeys: any VM of the service may PUT another's
// USER_TEMPLATE. A master address that is not one of the master VM's own
// NICs is never joined; the wait ends with the reason.
func TestSiblingRewritesMasterKeys(t *testing.T) {
	og := newService(8, []int{3}, []int{8, 9})
	og.publishMasterData(3, goodToken, goodHash)
	og.vms[3].UserTemplate[vmcontext.KeyPubMaster] = vmIP(9) // VM 9 points workers at itself
	h := newHarness(t, og)
	h.tun.MasterTimeout = 5 * time.Minute
	err := h.run()
	if !errors.Is(err, ErrMasterTimeout) || !strings.Contains(err.Error(), vmIP(9)+" is not an address of VM 3") {
		t.Fatalf("err = %v", err)
	}
	if h.kadm.count("join") != 0 {
		t.Error("joined an address the master VM does not have")
	}
	// The rejection is warned about once, naming the address, however
	// many polls saw it.
	var warns []string
	for _, l := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, vmIP(9)) {
			warns = append(warns, l)
		}
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "not one of that VM's NIC addresses") {
		t.Errorf("%d warnings naming %s, want 1:\n%s", len(warns), vmIP(9), strings.Join(warns, "\n"))
	}
}

// TestOwnVMMustBeOwn: GET /vm describing another VM stops discovery.
func TestOwnVMMustBeOwn(t *testing.T) {
	og := newService(3, []int{3}, nil)
	h := newHarness(t, og)
	h.creds.VMID = 4
	og.self = 4
	og.vms[4] = og.vms[3]
	if err := h.run(); err == nil || !strings.Contains(err.Error(), "describes VM 3, but this is VM 4") {
		t.Fatalf("err = %v", err)
	}
}

// TestVersionMustMatchImage: ONEAPP_K8S_VERSION other than the image's
// kubeadm fails in discover, naming both.
func TestVersionMustMatchImage(t *testing.T) {
	h := newHarness(t, newService(3, []int{3}, nil))
	h.cfg.Version = "v1.35.0"
	err := h.run()
	if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "asks for v1.35.0, but this image's kubeadm is v1.37.2") || !strings.Contains(err.Error(), "phase discover") {
		t.Fatalf("err = %v", err)
	}
	if h.kadm.count("init") != 0 {
		t.Error("initialized anyway")
	}
}

// TestHungKubeadmIsBounded: a kubeadm that never returns is cut off at the
// command timeout, and the failure is reported.
func TestHungKubeadmIsBounded(t *testing.T) {
	h := newHarness(t, newService(3, []int{3}, nil))
	h.tun.CommandTimeout = 50 * time.Millisecond
	h.kadm.hang = true
	start := time.Now()
	err := h.run()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s", d)
	}
	if h.og.ut(3, vmcontext.KeyPubPhase) != PhaseFailed {
		t.Error("not reported")
	}
}

// TestTokenPartsAreRedacted: kubeadm's output may carry the token's ID or
// secret half alone; neither reaches the logs, ONEGATE_K8S_ERROR, the
// state file or status.
func TestTokenPartsAreRedacted(t *testing.T) {
	h := newHarness(t, newService(3, []int{3}, nil))
	h.kadm.initErrFrom = func(config string) error {
		tok := tokenRE.FindString(config)
		id, secret, _ := strings.Cut(tok, ".")
		return system.NewExitError(system.Cmd{Name: "kubeadm", Args: []string{"init"}}, 1, system.Result{
			Stderr: []byte(fmt.Sprintf("error execution phase bootstrap-token: secret %s of bootstrap-token-%s rejected", secret, id))})
	}
	err := h.run()
	if err == nil {
		t.Fatal("init failure not reported")
	}
	tok := tokenRE.FindString(h.kadm.configs["init"])
	id, secret, _ := strings.Cut(tok, ".")
	status, serr := ReadStatus(h.root)
	if serr != nil {
		t.Fatal(serr)
	}
	var js strings.Builder
	_ = status.WriteJSON(&js)
	var txt strings.Builder
	_ = status.WriteText(&txt)
	stateFile, _ := h.root.ReadFile("/var/lib/onekube/state.json")
	for where, text := range map[string]string{
		"error":             err.Error(),
		"logs":              h.logs.String(),
		"ONEGATE_K8S_ERROR": h.og.ut(3, vmcontext.KeyPubError),
		"state.json":        string(stateFile),
		"status":            txt.String(),
		"status --json":     js.String(),
	} {
		if strings.Contains(text, secret) || strings.Contains(text, id) {
			t.Errorf("%s holds a part of the token:\n%s", where, text)
		}
		if where != "logs" && !strings.Contains(text, "rejected") {
			t.Errorf("%s lost the reason:\n%s", where, text)
		}
	}
}

// TestFailureReportKeepsKubeadmsReason: ONEGATE_K8S_ERROR carries the
// tool's own reason (with its '=' and quotes made storable), not the
// command line.
func TestFailureReportKeepsKubeadmsReason(t *testing.T) {
	h := newHarness(t, newService(3, []int{3}, nil))
	h.kadm.initErrFrom = func(string) error {
		return system.NewExitError(system.Cmd{Name: "kubeadm", Args: []string{"init", "--config", "/var/lib/onekube/kubeadm-init.yaml", "--skip-token-print"}}, 1,
			system.Result{Stderr: []byte("[preflight] Some fatal errors occurred:\n\t[ERROR CRI]: container runtime is not running: output: time=\"2024-02-12T10:00:00Z\" level=fatal msg=\"validate service connection: CRI v1 runtime API is not implemented\"\n, error: exit status 1\nerror execution phase preflight: preflight checks failed\nTo see the stack trace of this error execute with --v=5 or higher")})
	}
	_ = h.run()
	got := h.og.ut(3, vmcontext.KeyPubError)
	want := "phase kubeadm-init: kubeadm init exited 1: (ERROR CRI): container runtime is not running: output: time='2024-02-12T10:00:00Z' level=fatal msg='validate service connection: CRI v1 runtime API is not implemented'"
	if !strings.HasPrefix(got, want) || strings.Contains(got, "--config") {
		t.Errorf("ONEGATE_K8S_ERROR =\n%s\nwant it to start with\n%s", got, want)
	}
	if err := onegate.CheckValue(vmcontext.KeyPubError, got); err != nil {
		t.Error(err)
	}
}

// mangling is a OneGate of 5.12 or older as far as '=' goes: a value with
// '=' is cut at it (see onegate.EncodeUpdate).
type mangling struct{ *fakeOneGate }

func (m mangling) UpdateVM(ctx context.Context, kvs ...onegate.KV) error {
	out := make([]onegate.KV, len(kvs))
	for i, kv := range kvs {
		v, _, _ := strings.Cut(kv.Value, "=")
		out[i] = onegate.KV{Key: kv.Key, Value: v}
	}
	return m.fakeOneGate.UpdateVM(ctx, out...)
}

// TestFailureReportOnOldOneGate: where '=' does not survive, the report is
// read back and sent again without it.
func TestFailureReportOnOldOneGate(t *testing.T) {
	og := newService(3, []int{3}, nil)
	r := oneGateReporter{og: mangling{og}, log: discardLogger(), timeout: time.Second}
	r.Failure(bounded(t), `kubeadm init exited 1: level=fatal msg="x"`)
	if got := og.ut(3, vmcontext.KeyPubError); got != "kubeadm init exited 1: level:fatal msg:'x'" {
		t.Errorf("ONEGATE_K8S_ERROR = %q", got)
	}
	og2 := newService(3, []int{3}, nil)
	oneGateReporter{og: og2, log: discardLogger(), timeout: time.Second}.Failure(bounded(t), "level=fatal")
	if got := og2.ut(3, vmcontext.KeyPubError); got != "level=fatal" || og2.calls["UpdateVM"] != 1 {
		t.Errorf("6.0+: %q after %d updates", got, og2.calls["UpdateVM"])
	}
}

// TestAddressIsChosenByTheSelector: the node's address on a two-NIC VM
// comes from ONEAPP_K8S_ADDRESS's network, and the hostname maps to it.
func TestAddressIsChosenByTheSelector(t *testing.T) {
	og := newService(3, []int{3}, nil)
	og.vms[3].NICs = append(og.vms[3].NICs, onegate.NIC{Name: "NIC1", IP: "172.16.0.3", MAC: "02:00:ac:10:00:03", Network: "storage"})
	h := newHarness(t, og)
	vars := vmcontext.Vars{"ETH0_IP": vmIP(3), "ETH0_MAC": vmMAC(3), "ETH1_IP": "172.16.0.3", "ETH1_MAC": "02:00:ac:10:00:03",
		vmcontext.KeyAddress: "storage", vmcontext.KeyCNI: "none"}
	cfg, err := ConfigFromVars(vars, og.vms[3], "master")
	if err != nil {
		t.Fatal(err)
	}
	h.cfg = cfg
	if err := h.run(); err != nil {
		t.Fatalf("%v\n%s", err, h.logs)
	}
	if og.ut(3, vmcontext.KeyPubMaster) != "172.16.0.3" || !strings.Contains(h.kadm.configs["init"], "advertiseAddress: 172.16.0.3") {
		t.Errorf("published %s; init config:\n%s", og.ut(3, vmcontext.KeyPubMaster), h.kadm.configs["init"])
	}
	if b, _ := h.root.ReadFile(EtcHosts); !strings.Contains(string(b), "172.16.0.3\tmaster-3\t") {
		t.Errorf("/etc/hosts:\n%s", b)
	}
}

func TestHostsWith(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ in, want string }{
		"empty":            {"", "10.0.0.3\tworker-3\t# onekube node name\n"},
		"keeps the rest":   {"127.0.0.1 localhost\n127.0.1.1 onekube-appliance", "127.0.0.1 localhost\n127.0.1.1 onekube-appliance\n10.0.0.3\tworker-3\t# onekube node name\n"},
		"replaces its own": {"a\n10.9.9.9\told-1\t# onekube node name\nb\n", "a\n10.0.0.3\tworker-3\t# onekube node name\nb\n"},
	}
	for name, c := range cases {
		if got := hostsWith(c.in, "10.0.0.3", "worker-3"); got != c.want {
			t.Errorf("%s:\n%q\nwant\n%q", name, got, c.want)
		}
	}
}

// FuzzHostsWith: whatever /etc/hosts holds, the result maps the name once
// and keeps every other line.
func FuzzHostsWith(f *testing.F) {
	f.Add("127.0.0.1 localhost\n")
	f.Add("x\t# onekube node name\ny\t# onekube node name")
	f.Fuzz(func(t *testing.T, hosts string) {
		got := hostsWith(hosts, "10.0.0.3", "worker-3")
		if strings.Count(got, hostsMarker) != 1 || !strings.Contains(got, "10.0.0.3\tworker-3\t"+hostsMarker+"\n") {
			t.Fatalf("hostsWith(%q) = %q", hosts, got)
		}
		for _, l := range strings.Split(hosts, "\n") {
			if l != "" && !strings.Contains(l, hostsMarker) && !strings.Contains(got, l) {
				t.Fatalf("line %q lost", l)
			}
		}
	})
}
