package agent

import (
	"net/http"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// TestStraightWorkerSkipsTheService: a worker OneFlow created knowing the
// master's VM ID (straight deployment, master READY) joins on three OneGate
// requests, none of them a service document: issue 14's flat cost.
func TestStraightWorkerSkipsTheService(t *testing.T) {
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
	want := map[string]int{"GetVM": 1, "GetVMByID": 1, "UpdateVM": 1}
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

// TestStaleMasterHint: the context names a master OneGate no longer knows
// (recreated, or scaled down before this worker booted); the worker reads
// the service at once, not after serviceRefresh, and joins the master the
// service lists.
func TestStaleMasterHint(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusBadRequest} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			og := newService(8, []int{3}, []int{8, 9})
			og.publishMasterData(3, goodToken, goodHash)
			og.fail = func(op string, n int) error {
				if op == "GetVMByID" && n == 1 {
					return &onegate.Error{Method: http.MethodGet, Path: "/vms/2", Status: status}
				}
				return nil
			}
			h := newHarness(t, og)
			stale := 2
			h.cfg.MasterVMID = &stale
			if err := h.run(); err != nil {
				t.Fatalf("bootstrap: %v\n%s", err, h.logs)
			}
			if og.calls["GetService"] != 1 || h.kadm.count("join") != 1 {
				t.Errorf("service read %d times, joined %d times", og.calls["GetService"], h.kadm.count("join"))
			}
			if elapsed := h.clock.Now().Sub(testEpoch); elapsed > h.tun.MaxPollInterval {
				t.Errorf("joined after %s: the stale hint was not dropped at once", elapsed)
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

// TestHintedMasterDown: OneFlow names the oldest master even when it is
// powered off (its vm.info still answers, READY=YES from its boot, no
// token). The worker reads the service after that first look and joins
// through a master that has join data, instead of waiting serviceRefresh
// on the one it was told about.
func TestHintedMasterDown(t *testing.T) {
	og := newService(8, []int{3, 4}, []int{8})
	og.publishMasterData(4, goodToken, goodHash)
	og.vms[3].UserTemplate[vmcontext.KeyReady] = "YES"
	og.vms[3].State, og.vms[3].LCMState = onegate.StatePoweroff, 0
	h := newHarness(t, og)
	first := 3
	h.cfg.MasterVMID = &first
	if err := h.run(); err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, h.logs)
	}
	if og.calls["GetService"] != 1 || h.kadm.count("join") != 1 {
		t.Errorf("service read %d times, joined %d times", og.calls["GetService"], h.kadm.count("join"))
	}
	if elapsed := h.clock.Now().Sub(testEpoch); elapsed > h.tun.MaxPollInterval {
		t.Errorf("joined after %s, want within one backoff", elapsed)
	}
}

// TestHintedMasterWithoutToken: a running, READY master without a token
// (serve erased it while nobody waited) is not a reason to read the
// service: the worker announces it waits and polls that master until
// serve has minted one.
func TestHintedMasterWithoutToken(t *testing.T) {
	og := newService(8, []int{3}, []int{8})
	og.publishMasterData(3, goodToken, goodHash)
	delete(og.vms[3].UserTemplate, vmcontext.KeyPubToken)
	og.beforeGetVMByID = func(f *fakeOneGate, id, n int) {
		if n == 3 && f.vms[8].UserTemplate[vmcontext.KeyPubPhase] == PhaseWaitMaster { // f.mu is held
			f.vms[3].UserTemplate[vmcontext.KeyPubToken] = goodToken
		}
	}
	h := newHarness(t, og)
	master := 3
	h.cfg.MasterVMID = &master
	if err := h.run(); err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, h.logs)
	}
	if og.calls["GetService"] != 0 || h.kadm.count("join") != 1 {
		t.Errorf("service read %d times, joined %d times", og.calls["GetService"], h.kadm.count("join"))
	}
}

// TestHintedMasterHung: a guest that hung stays RUNNING in oned, READY from
// its boot, and its serve mints nothing. After hintPatience the worker
// reads the service and joins through another master.
func TestHintedMasterHung(t *testing.T) {
	og := newService(8, []int{3, 4}, []int{8})
	og.publishMasterData(4, goodToken, goodHash)
	og.vms[3].UserTemplate[vmcontext.KeyReady] = "YES"
	h := newHarness(t, og)
	first := 3
	h.cfg.MasterVMID = &first
	if err := h.run(); err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, h.logs)
	}
	if og.calls["GetService"] != 1 || h.kadm.count("join") != 1 {
		t.Errorf("service read %d times, joined %d times", og.calls["GetService"], h.kadm.count("join"))
	}
	if elapsed := h.clock.Now().Sub(testEpoch); elapsed < hintPatience || elapsed > hintPatience+h.tun.MaxPollInterval {
		t.Errorf("joined after %s, want after the %s patience and within one backoff", elapsed, hintPatience)
	}
}
