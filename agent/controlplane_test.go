package agent

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/onekube/onekube/agent/certgrant"
	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/lb/lbconfig"
	"github.com/onekube/onekube/agent/state"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

const testCertKey = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"

func TestKindOf(t *testing.T) {
	t.Parallel()
	ready := func(id int) *onegate.VM {
		return &onegate.VM{ID: id, UserTemplate: map[string]string{vmcontext.KeyReady: "YES", vmcontext.KeyPubHash: strings.Repeat("a", 64)}}
	}
	booting := func(id int) *onegate.VM { return &onegate.VM{ID: id, UserTemplate: map[string]string{}} }
	for _, c := range []struct {
		name   string
		vmid   int
		role   string
		others map[int]*onegate.VM
		want   Kind
	}{
		{"a worker", 9, "worker", nil, KindWorker},
		{"lowest master, nobody published", 3, "master", map[int]*onegate.VM{5: booting(5), 7: booting(7)}, KindInit},
		{"higher master, nobody published", 5, "master", map[int]*onegate.VM{3: booting(3), 7: booting(7)}, KindControlPlane},
		{"lowest master, a sibling published (recreated initialiser)", 3, "master", map[int]*onegate.VM{5: ready(5), 7: booting(7)}, KindControlPlane},
		{"READY without a hash is no cluster", 3, "master", map[int]*onegate.VM{5: {ID: 5, UserTemplate: map[string]string{vmcontext.KeyReady: "YES"}}}, KindInit},
		{"one master", 3, "master", nil, KindInit},
	} {
		if got := kindOf(c.vmid, c.role, "master", []int{3, 5, 7}, c.others); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// actAsMaster makes VM granter answer the first request it sees, as the
// acting master's serve does: a grant sealed to the recipient the joiner
// presents at its address, once it published that same one.
func actAsMaster(og *fakeOneGate, granter, joiner int) {
	og.beforeGetVMByID = func(f *fakeOneGate, _, _ int) {
		r := f.vms[joiner].UserTemplate[vmcontext.KeyPubRecipient]
		if r == "" || f.vms[granter].UserTemplate[vmcontext.KeyPubCertKey] != "" {
			return
		}
		p, err := certgrant.Fetch(context.Background(), f.net.dial, netip.MustParseAddr(vmIP(joiner)), joiner)
		if err != nil || p.Recipient != r {
			return // not presenting yet
		}
		g, err := certgrant.Seal(joiner, p.Recipient, testEpoch.Add(time.Hour), certgrant.Payload{
			CertificateKey: vmcontext.NewSecret(testCertKey), Token: vmcontext.NewSecret("abcdef.0123456789abcdef")})
		if err != nil {
			panic(err)
		}
		f.vms[granter].UserTemplate[vmcontext.KeyPubCertKey] = g.String()
	}
}

// TestControlPlaneJoinsWithItsGrant: a second master waits for the first,
// publishes a recipient, opens the grant sealed to it, joins through the
// endpoint with the certificate key, publishes READY with its kind, and
// withdraws the recipient. The key never reaches OneGate in clear.
func TestControlPlaneJoinsWithItsGrant(t *testing.T) {
	og := newService(5, []int{3, 5}, nil)
	h := newHarness(t, og)
	h.cfg.Endpoint = vmcontext.LocalBalancer
	caHash, _ := kubeadm.CACertHash(h.kadm.caPEM)
	og.publishMasterData(3, "abcdef.0123456789abcdef", caHash)
	og.vms[3].UserTemplate[vmcontext.KeyPubEndpoint] = vmcontext.LocalBalancer
	actAsMaster(og, 3, 5)
	if err := h.run(); err != nil {
		t.Fatalf("%v\n%s", err, h.logs)
	}
	cfgText := h.kadm.configs["join"]
	for _, want := range []string{"apiServerEndpoint: 127.0.0.1:6444", "certificateKey: " + testCertKey, "advertiseAddress: " + vmIP(5), "controlPlane:"} {
		if !strings.Contains(cfgText, want) {
			t.Errorf("join config lacks %q:\n%s", want, cfgText)
		}
	}
	ut := og.vms[5].UserTemplate
	if ut[vmcontext.KeyReady] != "YES" || ut[vmcontext.KeyPubKind] != string(KindControlPlane) || ut[vmcontext.KeyPubHash] != caHash ||
		ut[vmcontext.KeyPubEndpoint] != vmcontext.LocalBalancer || ut[vmcontext.KeyPubMaster] != vmIP(5) {
		t.Errorf("published %v", ut)
	}
	if _, ok := ut[vmcontext.KeyPubRecipient]; ok {
		t.Error("recipient still published after the join")
	}
	// The grant came only because the joiner presented its recipient at
	// its own address (actAsMaster reads it there); it stops after.
	if _, err := certgrant.Fetch(context.Background(), og.net.dial, netip.MustParseAddr(vmIP(5)), 5); err == nil {
		t.Error("still presenting the recipient after the join")
	}
	for _, u := range og.updates {
		for _, kv := range u {
			if strings.Contains(kv.Value, testCertKey) {
				t.Errorf("%s carries the certificate key in clear", kv.Key)
			}
		}
	}
	if strings.Contains(h.logs.String(), testCertKey) {
		t.Error("the certificate key is in the log")
	}
	if ok, _ := h.root.Exists(IdentityFile); ok {
		t.Error("the join identity is left on disk")
	}
	c, err := lbconfig.ReadConfig(h.root.Path(lbconfig.ConfigFile))
	if err != nil || strings.Join(c.Backends, " ") != vmIP(3)+":6443 "+vmIP(5)+":6443" {
		t.Errorf("balancer seed %v, %v", c.Backends, err)
	}
}

// TestRecreatedInitialiserRejoins: the lowest master comes back with a
// fresh disk while its sibling is READY: it joins as a control plane
// (never kubeadm init, never a refusal), after clearing its stale READY.
func TestRecreatedInitialiserRejoins(t *testing.T) {
	og := newService(3, []int{3, 5}, nil)
	h := newHarness(t, og)
	h.cfg.Endpoint = vmcontext.LocalBalancer
	caHash, _ := kubeadm.CACertHash(h.kadm.caPEM)
	og.publishMasterData(3, "abcdef.0123456789abcdef", caHash) // from its first life
	og.publishMasterData(5, "", caHash)
	delete(og.vms[5].UserTemplate, vmcontext.KeyPubToken)
	actAsMaster(og, 5, 3)
	if err := h.run(); err != nil {
		t.Fatalf("%v\n%s", err, h.logs)
	}
	if h.kadm.count("init") != 0 || h.kadm.count("join") != 1 {
		t.Errorf("kubeadm calls %v", h.kadm.calls)
	}
	if got := og.ut(3, vmcontext.KeyPubKind); got != string(KindControlPlane) {
		t.Errorf("kind %q", got)
	}
	if og.ut(3, vmcontext.KeyPubToken) != "" {
		t.Error("the stale token of its first life is still published")
	}
	// READY was cleared before the request and written only at the end.
	var readyAt, recipientAt = -1, -1
	for i, u := range og.updates {
		for _, kv := range u {
			if kv.Key == vmcontext.KeyReady && readyAt < 0 {
				readyAt = i
			}
			if kv.Key == vmcontext.KeyPubRecipient && recipientAt < 0 {
				recipientAt = i
			}
		}
	}
	if recipientAt < 0 || readyAt < recipientAt {
		t.Errorf("READY published at update %d, recipient at %d", readyAt, recipientAt)
	}
}

// TestControlPlaneStopsWhenTheInitialiserFailed: no cluster, and the
// lowest master reported failure: waiting cannot help.
func TestControlPlaneStopsWhenTheInitialiserFailed(t *testing.T) {
	og := newService(5, []int{3, 5}, nil)
	og.vms[3].UserTemplate[vmcontext.KeyPubPhase] = PhaseFailed
	og.vms[3].UserTemplate[vmcontext.KeyPubError] = "phase kubeadm-init: boom"
	h := newHarness(t, og)
	err := h.run()
	if !errors.Is(err, ErrMasterFailed) || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v", err)
	}
	if h.kadm.count("join") != 0 {
		t.Error("joined without a cluster")
	}
}

// TestGrantForAnotherRecipientIsIgnored: a grant sealed to someone else
// (an older attempt, or a sibling's forgery) is never used; the wait ends
// at the master timeout with a clear message.
func TestGrantForAnotherRecipientIsIgnored(t *testing.T) {
	og := newService(5, []int{3, 5}, nil)
	h := newHarness(t, og)
	h.tun.MasterTimeout = 3 * time.Minute
	caHash, _ := kubeadm.CACertHash(h.kadm.caPEM)
	og.publishMasterData(3, "abcdef.0123456789abcdef", caHash)
	other, _ := age.GenerateX25519Identity()
	g, err := certgrant.Seal(5, other.Recipient().String(), testEpoch.Add(time.Hour), certgrant.Payload{CertificateKey: vmcontext.NewSecret(testCertKey)})
	if err != nil {
		t.Fatal(err)
	}
	og.vms[3].UserTemplate[vmcontext.KeyPubCertKey] = g.String()
	err = h.run()
	if !errors.Is(err, ErrMasterTimeout) || !strings.Contains(err.Error(), "granted the certificate key") {
		t.Fatalf("err = %v", err)
	}
	if h.kadm.count("join") != 0 {
		t.Error("joined with someone else's grant")
	}
}

// TestControlPlaneCrashBeforePublish: the join finished, the agent died
// before READY; the rerun publishes from the disk without waiting again.
func TestControlPlaneCrashBeforePublish(t *testing.T) {
	og := newService(5, []int{3, 5}, nil)
	h := newHarness(t, og)
	h.cfg.Endpoint = vmcontext.LocalBalancer
	caHash, _ := kubeadm.CACertHash(h.kadm.caPEM)
	og.publishMasterData(3, "abcdef.0123456789abcdef", caHash)
	actAsMaster(og, 3, 5)
	if err := h.run(); err != nil {
		t.Fatal(err)
	}
	// Back to the moment after kubeadm join: no sentinel, nothing
	// published yet, the grant gone.
	if err := h.root.Remove(state.SentinelFile); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{vmcontext.KeyReady, vmcontext.KeyPubHash, vmcontext.KeyPubMaster, vmcontext.KeyPubKind} {
		delete(og.vms[5].UserTemplate, k)
	}
	delete(og.vms[3].UserTemplate, vmcontext.KeyPubCertKey)
	og.beforeGetVMByID = nil
	if err := h.run(); err != nil {
		t.Fatalf("rerun: %v\n%s", err, h.logs)
	}
	if h.kadm.count("join") != 1 || og.ut(5, vmcontext.KeyReady) != "YES" || og.ut(5, vmcontext.KeyPubHash) != caHash {
		t.Errorf("joins %d, READY %q, hash %q", h.kadm.count("join"), og.ut(5, vmcontext.KeyReady), og.ut(5, vmcontext.KeyPubHash))
	}
}
