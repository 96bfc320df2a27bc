package agent

import (
	"errors"
	"strings"
	"testing"

	"github.com/onekube/onekube/agent/state"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
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
