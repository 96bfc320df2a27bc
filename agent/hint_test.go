package agent

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// TestStraightWorkerReadsTheServiceOnce: a worker OneFlow created knowing
// the master's VM ID (straight deployment, master READY) joins on four
// OneGate requests: its own VM, the named master, the short service
// document once (to confirm that master is in the master role, issue 18)
// and its report, plus a fifth: its rename to its node name (issue 22,
// identity.go). Flat in the cluster's size but for that document.
func TestStraightWorkerReadsTheServiceOnce(t *testing.T) {
	og := newService(8, []int{3}, []int{8, 9})
	og.publishMasterData(3, goodToken, goodHash)
	h := newHarness(t, og)
	master := 3
	h.cfg.MasterVMID = &master
	if err := h.run(); err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, h.logs)
	}
	if h.kadm.count("join") != 1 {
		t.Fatalf("joined %d times", h.kadm.count("join"))
	}
	want := map[string]int{"GetVM": 1, "GetVMByID": 1, "GetService": 1, "UpdateVM": 1, "Action": 1}
	for op, n := range og.calls {
		if want[op] != n {
			t.Errorf("%s called %d times, want %d (all: %v)", op, n, want[op], og.calls)
		}
	}
	var phases []string
	for _, u := range og.updates {
		phases = append(phases, kvMap(u)[vmcontext.KeyPubPhase])
	}
	if len(phases) != 1 || phases[0] != PhaseDone {
		t.Errorf("phases published %v, want [done]: the join is not announced unless it waits", phases)
	}
}

// TestMasterHintFallback: the master the context names is where a
// straight worker looks first; when that master cannot serve it, the
// worker reads the service once and joins through another, at once or
// after hintPatience, and a master that will serve it costs the one read
// that confirms it is in the master role.
func TestMasterHintFallback(t *testing.T) {
	notOurs := func(status int) func(op string, n int) error {
		return func(op string, n int) error {
			if op == "GetVMByID" && n == 1 {
				return &onegate.Error{Method: http.MethodGet, Path: "/vms/3", Status: status}
			}
			return nil
		}
	}
	for _, c := range []struct {
		name string
		// setup makes VM 3, the named master, what the case says; VM 4
		// is another master with join data unless setup says otherwise.
		setup        func(og *fakeOneGate)
		serviceReads int
		after        time.Duration // joined no sooner
		within       time.Duration // and no later than this
	}{
		{"gone (404): read the service at once", func(og *fakeOneGate) { og.fail = notOurs(http.StatusNotFound) },
			1, 0, time.Second},
		{"not of this service (400): read the service at once", func(og *fakeOneGate) { og.fail = notOurs(http.StatusBadRequest) },
			1, 0, time.Second},
		{"powered off, READY from its boot: read the service at once", func(og *fakeOneGate) {
			og.vms[3].UserTemplate[vmcontext.KeyReady] = "YES"
			og.vms[3].State, og.vms[3].LCMState = onegate.StatePoweroff, 0
		}, 1, 0, time.Second},
		{"hung, still RUNNING in oned: read the service after the patience", func(og *fakeOneGate) {
			og.vms[3].UserTemplate[vmcontext.KeyReady] = "YES"
			// The patience is checked at a poll: up to one backoff (30 s
			// ±50%) past it.
		}, 1, hintPatience, hintPatience + 3*DefaultMaxPollInterval/2},
		{"running, its serve mints a token for the waiting worker: one read, to confirm it", func(og *fakeOneGate) {
			og.publishMasterData(3, goodToken, goodHash)
			delete(og.vms[3].UserTemplate, vmcontext.KeyPubToken)
			delete(og.vms[4].UserTemplate, vmcontext.KeyPubToken)
			og.beforeGetVMByID = func(f *fakeOneGate, id, n int) {
				// f.mu is held: the template, not f.ut.
				if n == 3 && f.vms[8].UserTemplate[vmcontext.KeyPubPhase] == PhaseWaitMaster {
					f.vms[3].UserTemplate[vmcontext.KeyPubToken] = goodToken
				}
			}
		}, 1, 0, hintPatience},
	} {
		t.Run(c.name, func(t *testing.T) {
			og := newService(8, []int{3, 4}, []int{8})
			og.publishMasterData(4, goodToken, goodHash)
			c.setup(og)
			h := newHarness(t, og)
			named := 3
			h.cfg.MasterVMID = &named
			if err := h.run(); err != nil {
				t.Fatalf("bootstrap: %v\n%s", err, h.logs)
			}
			if og.calls["GetService"] != c.serviceReads || h.kadm.count("join") != 1 {
				t.Errorf("service read %d times (want %d), joined %d times", og.calls["GetService"], c.serviceReads, h.kadm.count("join"))
			}
			if took := h.clock.Now().Sub(testEpoch); took < c.after || took > c.within {
				t.Errorf("joined after %s, want %s to %s", took, c.after, c.within)
			}
		})
	}
}

// TestWaitingWorkerAnnouncesItself: a worker whose first look finds no
// join data publishes wait-master once (serve counts it as waiting), not
// once per poll.
func TestWaitingWorkerAnnouncesItself(t *testing.T) {
	og := newService(8, []int{3}, []int{8})
	og.beforeGetVMByID = func(f *fakeOneGate, id, n int) {
		if n == 4 {
			f.publishMasterData(3, goodToken, goodHash)
		}
	}
	h := newHarness(t, og)
	if err := h.run(); err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, h.logs)
	}
	var waits int
	for _, u := range og.updates {
		if kvMap(u)[vmcontext.KeyPubPhase] == PhaseWaitMaster {
			waits++
		}
	}
	if waits != 1 || og.calls["GetVMByID"] != 4 {
		t.Errorf("wait-master published %d times over %d polls, want once", waits, og.calls["GetVMByID"])
	}
}

// TestMasterHintOutsideTheMasterRoleIsIgnored: the master the context
// names is followed only if OneFlow's service document lists it in the
// master role; a hand-edited or stale template naming another VM of the
// service (a worker, whose ROLE_NAME any sibling can rewrite) neither
// lends this worker its control plane nor stops it with its failure. The
// worker falls back to the master role and joins VM 3.
func TestMasterHintOutsideTheMasterRoleIsIgnored(t *testing.T) {
	for _, c := range []struct {
		name         string
		setup        func(og *fakeOneGate)
		serviceReads int
	}{
		{"it publishes a control plane of its own", func(og *fakeOneGate) {
			og.publishMasterData(9, goodToken, "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff")
			og.vms[9].UserTemplate[vmcontext.KeyRoleName] = "master" // forged: OneGate's check is bypassed
		}, 1},
		{"it published a failure", func(og *fakeOneGate) {
			og.vms[9].UserTemplate[vmcontext.KeyPubPhase] = PhaseFailed
			og.vms[9].UserTemplate[vmcontext.KeyPubError] = "kubeadm init: boom"
		}, 1},
		{"the first service read fails: the hint waits, unconfirmed", func(og *fakeOneGate) {
			og.publishMasterData(9, goodToken, "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff")
			og.fail = func(op string, n int) error {
				if op == "GetService" && n == 1 {
					return Retryable(&onegate.Error{Method: http.MethodGet, Path: "/service", Status: http.StatusServiceUnavailable})
				}
				return nil
			}
		}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			og := newService(8, []int{3}, []int{8, 9})
			og.publishMasterData(3, goodToken, goodHash)
			c.setup(og)
			h := newHarness(t, og)
			named := 9
			h.cfg.MasterVMID = &named
			if err := h.run(); err != nil {
				t.Fatalf("bootstrap: %v\n%s", err, h.logs)
			}
			if h.kadm.count("join") != 1 || !strings.Contains(h.kadm.configs["join"], vmIP(3)+":6443") {
				t.Fatalf("joined %d times, last config:\n%s", h.kadm.count("join"), h.kadm.configs["join"])
			}
			if !strings.Contains(h.kadm.configs["join"], goodHash) {
				t.Errorf("joined with another CA pin:\n%s", h.kadm.configs["join"])
			}
			if og.calls["GetService"] != c.serviceReads {
				t.Errorf("service read %d times, want %d", og.calls["GetService"], c.serviceReads)
			}
		})
	}
}

// TestMasterHintInTheRoleThatFailedStopsTheWorker: a named master the
// service lists in the master role is believed when it reports failure.
func TestMasterHintInTheRoleThatFailedStopsTheWorker(t *testing.T) {
	og := newService(8, []int{3}, []int{8})
	og.vms[3].UserTemplate[vmcontext.KeyPubPhase] = PhaseFailed
	og.vms[3].UserTemplate[vmcontext.KeyPubError] = "kubeadm init: boom"
	h := newHarness(t, og)
	named := 3
	h.cfg.MasterVMID = &named
	err := h.run()
	if !errors.Is(err, ErrMasterFailed) || !strings.Contains(err.Error(), `"kubeadm init: boom"`) {
		t.Fatalf("bootstrap: %v, want the master's failure", err)
	}
	if og.calls["GetService"] != 1 || h.kadm.count("join") != 0 {
		t.Errorf("service read %d times (want once), joined %d times", og.calls["GetService"], h.kadm.count("join"))
	}
}
