package agent

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/onekube/onekube/agent/state"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
	"github.com/onekube/onekube/context/onegatesim"
)

// tabBypass is what oned stores after a sibling's PUT /vms/:id of
// "\tROLE_NAME=<role>": OneGate's restricted-attribute check compares the
// text before '=' as typed, oned's parser skips the tab
// (shared/reference/onegate-trust.md), and ROLE_NAME is rewritten.
func tabBypass(og *fakeOneGate, vmid int, role string) {
	og.vms[vmid].UserTemplate[vmcontext.KeyRoleName] = role
}

// roleNamed resolves like ConfigFromVars with no ONEAPP_K8S_NODENAME: the
// node name's prefix is the role the agent was given.
func roleNamed(h *harness) {
	h.resolve = func(self *onegate.VM, role string) (Config, error) {
		cfg := h.cfg
		cfg.NodeName = vmcontext.NodeName("", role, self.ID)
		return cfg, nil
	}
}

// TestRoleComesFromTheServiceDocument: a VM's role is the role OneFlow's
// service document lists it in, never its ROLE_NAME, which any sibling
// rewrites past OneGate's check. A worker claimed to be a master still
// joins as a worker named worker-<id>; a master claimed to be a worker
// still initialises, named master-<id>. The claim is logged, bounded, and
// published nowhere.
func TestRoleComesFromTheServiceDocument(t *testing.T) {
	t.Run("worker rewritten to master", func(t *testing.T) {
		og := newService(8, []int{3}, []int{8})
		og.publishMasterData(3, goodToken, goodHash)
		tabBypass(og, 8, "master")
		h := newHarness(t, og)
		roleNamed(h)
		if err := h.run(); err != nil {
			t.Fatalf("bootstrap: %v\n%s", err, h.logs)
		}
		if h.kadm.count("join") != 1 || h.kadm.count("init") != 0 || strings.Contains(h.kadm.configs["join"], "controlPlane") {
			t.Fatalf("kubeadm calls %v; join config:\n%s", h.kadm.calls, h.kadm.configs["join"])
		}
		if got := og.ut(8, vmcontext.KeyPubNodeName); got != "worker-8" {
			t.Errorf("node name %q, want worker-8", got)
		}
		st := loadTestState(t, h)
		if st.Role != string(KindWorker) || st.RoleName != "worker" {
			t.Errorf("state role %q/%q, want worker/worker", st.Role, st.RoleName)
		}
		if logs := h.logs.String(); !strings.Contains(logs, "ROLE_NAME") || !strings.Contains(logs, "service document") {
			t.Errorf("the disagreement is not logged:\n%s", logs)
		}
	})
	t.Run("a hostile claim reaches the log bounded and escaped", func(t *testing.T) {
		og := newService(8, []int{3}, []int{8})
		og.publishMasterData(3, goodToken, goodHash)
		tabBypass(og, 8, "master\x1b[31m"+strings.Repeat("x", 5000))
		h := newHarness(t, og)
		roleNamed(h)
		if err := h.run(); err != nil {
			t.Fatalf("bootstrap: %v\n%s", err, h.logs)
		}
		logs := h.logs.String()
		if !strings.Contains(logs, "ROLE_NAME") || strings.Contains(logs, "\x1b") || strings.Contains(logs, strings.Repeat("x", 1000)) {
			t.Errorf("the claim is not logged, or logged unbounded or unescaped:\n%.2000s", logs)
		}
		for _, u := range og.updates {
			for _, kv := range u {
				if strings.Contains(kv.Value, "xxxx") {
					t.Errorf("the claim was published: %s", kv.Key)
				}
			}
		}
	})
	t.Run("master rewritten to worker", func(t *testing.T) {
		og := newService(3, []int{3}, []int{8})
		tabBypass(og, 3, "worker")
		h := newHarness(t, og)
		roleNamed(h)
		if err := h.run(); err != nil {
			t.Fatalf("bootstrap: %v\n%s", err, h.logs)
		}
		if h.kadm.count("init") != 1 || h.kadm.count("join") != 0 {
			t.Fatalf("kubeadm calls %v", h.kadm.calls)
		}
		if got := og.ut(3, vmcontext.KeyPubNodeName); got != "master-3" {
			t.Errorf("node name %q, want master-3", got)
		}
	})
	t.Run("rewritten after kubeadm ran: the role stays", func(t *testing.T) {
		og := newService(8, []int{3}, []int{8})
		og.publishMasterData(3, goodToken, goodHash)
		h := newHarness(t, og)
		roleNamed(h)
		// A crash right after the join, before the report.
		og.fail = func(op string, n int) error {
			if op == "UpdateVM" && n == 1 {
				return errors.New("OneGate went away")
			}
			return nil
		}
		if err := h.run(); err == nil {
			t.Fatal("the report did not fail")
		}
		og.fail = nil
		tabBypass(og, 8, "master")
		if err := h.run(); err != nil {
			t.Fatalf("rerun: %v\n%s", err, h.logs)
		}
		if h.kadm.count("join") != 1 || h.kadm.count("init") != 0 || og.ut(8, vmcontext.KeyPubNodeName) != "worker-8" {
			t.Errorf("kubeadm calls %v, node name %q", h.kadm.calls, og.ut(8, vmcontext.KeyPubNodeName))
		}
	})
}

// TestServiceIDIsAClaim: a VM acts only in the service that lists it. A
// SERVICE_ID that names another service, or a document that does not list
// this VM, stops the agent before it touches anything.
func TestServiceIDIsAClaim(t *testing.T) {
	for name, setup := range map[string]func(og *fakeOneGate){
		"another service's document": func(og *fakeOneGate) { og.service.ID = 9 },
		"not listed": func(og *fakeOneGate) {
			og.service.Roles[1].Nodes = og.service.Roles[1].Nodes[1:]
		},
		"no SERVICE_ID": func(og *fakeOneGate) { delete(og.vms[8].UserTemplate, vmcontext.KeyServiceID) },
	} {
		t.Run(name, func(t *testing.T) {
			og := newService(8, []int{3}, []int{8, 9})
			og.publishMasterData(3, goodToken, goodHash)
			setup(og)
			h := newHarness(t, og)
			err := h.run()
			if !errors.Is(err, ErrNotInService) {
				t.Fatalf("err = %v, want ErrNotInService", err)
			}
			if len(h.kadm.calls) != 0 || og.calls["GetVMByID"] != 0 {
				t.Errorf("acted anyway: kubeadm %v, %d VM reads", h.kadm.calls, og.calls["GetVMByID"])
			}
		})
	}
}

// loadTestState reads the state the agent saved.
func loadTestState(t *testing.T, h *harness) *state.State {
	t.Helper()
	st, err := state.Store{Root: h.root}.Load()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestRoleComesFromTheServiceDocumentThroughOneGate is the first case
// against the simulated OneGate 6.10 and the real client: a sibling's
// PUT /vms/:id of "\tROLE_NAME=master" passes the restricted-attribute
// check and rewrites the worker's ROLE_NAME; the worker still joins as
// worker-<id>.
func TestRoleComesFromTheServiceDocumentThroughOneGate(t *testing.T) {
	t.Parallel()
	sim := onegatesim.New(onegatesim.Options{Dir: t.TempDir(), Version: "6.10"})
	endpoint, err := sim.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	sid, err := sim.Instantiate([]byte(`{"name":"k8s","deployment":"none","roles":[
 {"name":"master","type":"vm","vm_template":1,"cardinality":1},
 {"name":"worker","type":"vm","vm_template":2,"cardinality":2}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	master, workers := sim.RoleVMs(sid, "master")[0], sim.RoleVMs(sid, "worker")
	worker, hostile := workers[0], workers[1]
	mc, err := onegate.New(onegate.Config{Endpoint: endpoint, VMID: master.ID, Token: master.Token})
	if err != nil {
		t.Fatal(err)
	}
	if err := mc.UpdateVM(bounded(t),
		onegate.KV{Key: vmcontext.KeyPubMaster, Value: master.IP.String()}, onegate.KV{Key: vmcontext.KeyPubPort, Value: "6443"},
		onegate.KV{Key: vmcontext.KeyPubToken, Value: goodToken}, onegate.KV{Key: vmcontext.KeyPubHash, Value: goodHash},
		onegate.KV{Key: vmcontext.KeyReady, Value: "YES"}); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(bounded(t), http.MethodPut, fmt.Sprintf("%s/vms/%d", endpoint, worker.ID),
		strings.NewReader(url.Values{"data": {"\tROLE_NAME=master"}, "type": {"1"}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-ONEGATE-TOKEN", hostile.Token.Reveal())
	req.Header.Set("X-ONEGATE-VMID", strconv.Itoa(hostile.ID))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if got := sim.UserTemplate(worker.ID)[vmcontext.KeyRoleName]; resp.StatusCode != http.StatusOK || got != "master" {
		t.Fatalf("the bypass did not take: %d, ROLE_NAME=%q", resp.StatusCode, got)
	}

	h := newHarness(t, newService(worker.ID, nil, []int{worker.ID}))
	h.creds = vmcontext.Credentials{Endpoint: endpoint, VMID: worker.ID, Token: worker.Token}
	h.cfg.Address = worker.IP
	h.newOneGate = NewOneGateClient
	roleNamed(h)
	if err := h.run(); err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, h.logs)
	}
	want := fmt.Sprintf("worker-%d", worker.ID)
	if h.kadm.count("join") != 1 || h.kadm.count("init") != 0 || sim.UserTemplate(worker.ID)[vmcontext.KeyPubNodeName] != want {
		t.Errorf("kubeadm calls %v, node name %q, want a join as %s", h.kadm.calls, sim.UserTemplate(worker.ID)[vmcontext.KeyPubNodeName], want)
	}
	// Identity (issue 22): OpenNebula's name for the VM is now its node's.
	if v, _ := sim.VM(worker.ID); v.Name != want {
		t.Errorf("the simulated VM is named %q, want its node name %s", v.Name, want)
	}
}
