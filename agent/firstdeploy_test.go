package agent

import (
	"errors"
	"strings"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
)

// created sets every VM's STIME, as oned keeps it (recreate included).
func created(og *fakeOneGate, at time.Time) {
	for _, vm := range og.vms {
		vm.STime = at.Unix()
	}
}

// TestNoSilentNewClusterAfterTheFirstDeployment: every master recreated
// at once (fresh disks, same VM IDs and STIME), and a sibling erased what
// they published, so no key shows the cluster they had. The initialising
// master refuses `kubeadm init`, reported, naming --new-cluster; with it,
// it initialises. A first deployment (all VMs at once, or workers after
// the master), a first boot that failed long ago on this same disk, and a
// master scaled up later are not refused.
func TestNoSilentNewClusterAfterTheFirstDeployment(t *testing.T) {
	t.Run("all masters recreated, their keys erased", func(t *testing.T) {
		og := newService(3, []int{3, 4}, []int{8, 9})
		created(og, testEpoch.Add(-72*time.Hour))
		for _, id := range []int{8, 9} { // the workers still say they joined
			og.vms[id].UserTemplate[vmcontext.KeyReady] = "YES"
		}
		h := newHarness(t, og)
		err := h.run()
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "onekube-agent bootstrap --new-cluster") {
			t.Fatalf("err = %v, want a refusal naming --new-cluster\n%s", err, h.logs)
		}
		if h.kadm.count("init") != 0 || h.kadm.count("reset") != 0 {
			t.Errorf("kubeadm calls %v", h.kadm.calls)
		}
		if og.ut(3, vmcontext.KeyPubPhase) != PhaseFailed || !strings.Contains(og.ut(3, vmcontext.KeyPubError), "--new-cluster") {
			t.Errorf("refusal not reported: PHASE=%q ERROR=%q", og.ut(3, vmcontext.KeyPubPhase), og.ut(3, vmcontext.KeyPubError))
		}
		h.opts.NewCluster = true
		if err := h.run(); err != nil || h.kadm.count("init") != 1 {
			t.Fatalf("--new-cluster: err = %v, init %d times\n%s", err, h.kadm.count("init"), h.logs)
		}
	})
	t.Run("first deployment, every VM at once", func(t *testing.T) {
		og := newService(3, []int{3, 4}, []int{8, 9})
		created(og, testEpoch.Add(-2*time.Minute))
		h := newHarness(t, og)
		if err := h.run(); err != nil || h.kadm.count("init") != 1 {
			t.Fatalf("err = %v, init %d times\n%s", err, h.kadm.count("init"), h.logs)
		}
	})
	t.Run("first deployment, straight: no workers yet", func(t *testing.T) {
		og := newService(3, []int{3}, nil)
		created(og, testEpoch.Add(-time.Minute))
		h := newHarness(t, og)
		if err := h.run(); err != nil || h.kadm.count("init") != 1 {
			t.Fatalf("err = %v, init %d times\n%s", err, h.kadm.count("init"), h.logs)
		}
	})
	t.Run("a first boot that failed on this disk, run again hours later", func(t *testing.T) {
		og := newService(3, []int{3}, []int{8})
		created(og, testEpoch.Add(-time.Minute))
		h := newHarness(t, og)
		h.resolveErr = errors.New("ONEAPP_K8S_PODS_NETWORK: not a CIDR")
		if err := h.run(); err == nil {
			t.Fatal("a bad setting went through")
		}
		h.clock.Advance(5 * time.Hour)
		h.resolveErr = nil
		if err := h.run(); err != nil || h.kadm.count("init") != 1 {
			t.Fatalf("err = %v, init %d times\n%s", err, h.kadm.count("init"), h.logs)
		}
	})
	t.Run("a master scaled up later joins", func(t *testing.T) {
		og := newService(5, []int{3, 5}, []int{8})
		created(og, testEpoch.Add(-72*time.Hour))
		og.vms[5].STime = testEpoch.Add(-time.Minute).Unix()
		og.publishMasterData(3, goodToken, goodHash)
		h := newHarness(t, og)
		h.tun.MasterTimeout = time.Minute
		err := h.run()
		if errors.Is(err, ErrRefused) || h.kadm.count("init") != 0 || !strings.Contains(h.logs.String(), "kind=control-plane") {
			t.Fatalf("err = %v, kubeadm %v\n%s", err, h.kadm.calls, h.logs)
		}
	})
}

// TestNoSilentNewClusterInTheFirstHour: every master recreated within an
// hour of its creation, so STIME cannot tell; another VM of the service
// still shows the cluster it had (READY=YES, or a master's keys). The
// fresh initialising master refuses `kubeadm init`, naming that VM and
// --new-cluster. A forged key on a sibling is a claim: all it can cause
// is this refusal. With no sibling keys (a first deployment) or with
// --new-cluster, it initialises.
func TestNoSilentNewClusterInTheFirstHour(t *testing.T) {
	for name, tc := range map[string]struct {
		masters, workers []int
		publish          func(og *fakeOneGate)
		newCluster       bool
		refused          string // "" for an init
	}{
		"a worker still READY": {
			masters: []int{3, 4}, workers: []int{8, 9},
			publish: func(og *fakeOneGate) { og.vms[9].UserTemplate[vmcontext.KeyReady] = "YES" },
			refused: "VM 9 (worker) published READY=YES",
		},
		"another master READY, its master keys erased": {
			masters: []int{3, 4}, workers: []int{8},
			publish: func(og *fakeOneGate) { og.vms[4].UserTemplate[vmcontext.KeyReady] = "YES" },
			refused: "VM 4 (master) published READY=YES",
		},
		"a sibling's forged token key: a refusal, never an init": {
			masters: []int{3}, workers: []int{8},
			publish: func(og *fakeOneGate) { og.vms[8].UserTemplate[vmcontext.KeyPubToken] = "forged" },
			refused: "VM 8 (worker) published " + vmcontext.KeyPubToken,
		},
		"READY=NO is nothing": {
			masters: []int{3}, workers: []int{8},
			publish: func(og *fakeOneGate) { og.vms[8].UserTemplate[vmcontext.KeyReady] = "NO" },
		},
		"first deployment: nobody published": {
			masters: []int{3, 4}, workers: []int{8, 9},
		},
		"--new-cluster over a READY worker": {
			masters: []int{3}, workers: []int{8},
			publish:    func(og *fakeOneGate) { og.vms[8].UserTemplate[vmcontext.KeyReady] = "YES" },
			newCluster: true,
		},
	} {
		t.Run(name, func(t *testing.T) {
			og := newService(3, tc.masters, tc.workers)
			created(og, testEpoch.Add(-10*time.Minute))
			if tc.publish != nil {
				tc.publish(og)
			}
			h := newHarness(t, og)
			h.opts.NewCluster = tc.newCluster
			h.tun.MasterTimeout = time.Minute
			err := h.run()
			if tc.refused == "" {
				if err != nil || h.kadm.count("init") != 1 {
					t.Fatalf("err = %v, init %d times\n%s", err, h.kadm.count("init"), h.logs)
				}
				return
			}
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.refused) || !strings.Contains(err.Error(), "onekube-agent bootstrap --new-cluster") {
				t.Fatalf("err = %v, want a refusal naming %q and --new-cluster\n%s", err, tc.refused, h.logs)
			}
			if h.kadm.count("init") != 0 || h.kadm.count("reset") != 0 {
				t.Errorf("kubeadm calls %v", h.kadm.calls)
			}
			if og.ut(3, vmcontext.KeyPubPhase) != PhaseFailed || !strings.Contains(og.ut(3, vmcontext.KeyPubError), "--new-cluster") {
				t.Errorf("refusal not reported: PHASE=%q ERROR=%q", og.ut(3, vmcontext.KeyPubPhase), og.ut(3, vmcontext.KeyPubError))
			}
		})
	}
}
