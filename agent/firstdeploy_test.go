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
