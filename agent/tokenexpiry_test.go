package agent

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/certgrant"
	"github.com/onekube/onekube/agent/kubeadm"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

func TestStaleToken(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for name, c := range map[string]struct {
		expires string
		skew    time.Duration
		want    string
	}{
		"none published":       {"", 0, ""},
		"an hour left":         {"2026-11-22T13:00:00Z", 0, ""},
		"just over the margin": {"2026-11-22T12:05:01Z", 0, ""},
		"other zone, fresh":    {"2026-11-22T14:00:00+01:00", 0, ""},
		"within the margin":    {"2026-11-22T12:04:59Z", 0, "by the master's clock, within the 5m0s safety margin; waiting for a fresh one"},
		"expired":              {"2026-11-22T11:00:00Z", 0, "expires at 2026-11-22T11:00:00Z, -1h0m0s from now by the master's clock, within"},
		"malformed":            {"tomorrow", 0, "malformed ONEGATE_K8S_TOKEN_EXPIRES"},
		"fresh, this VM fast":  {"2026-11-22T12:15:00Z", 56 * time.Minute, ""},
		"a skew within 1 min":  {"2026-11-22T12:01:00Z", time.Minute, "by the master's clock, within"},
		"dying, this VM fast":  {"2026-11-22T12:01:00Z", 2 * time.Hour, "1m0s from now by the master's clock (this VM's clock runs 2h0m0s ahead of the master's), within"},
		"dying, this VM slow":  {"2026-11-22T12:01:00Z", -time.Hour, "(this VM's clock runs 1h0m0s behind the master's)"},
	} {
		vm := &onegate.VM{UserTemplate: map[string]string{vmcontext.KeyPubTokenExpires: c.expires}}
		got := ""
		exp, ok, err := publishedExpiry(vm)
		switch {
		case err != nil:
			got = err.Error()
		case ok:
			got = staleToken(exp, masterTime{now: now, skew: c.skew})
		}
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
}

// A worker never starts a join with a token about to expire: it waits, with
// a clear reason, and joins with the fresh token the second master mirrors
// later (any ready master will do).
func TestWorkerWaitsForAFreshToken(t *testing.T) {
	og := newService(8, []int{3, 5}, []int{8})
	const dying, fresh = "aaaaaa.0123456789abcdef", "bbbbbb.0123456789abcdef"
	hash := strings.Repeat("ab", 32)
	og.publishMasterData(3, dying, hash)
	og.vms[3].UserTemplate[vmcontext.KeyPubTokenExpires] = testEpoch.Add(2 * time.Minute).Format(time.RFC3339)
	og.publishMasterData(5, dying, hash)
	og.vms[5].UserTemplate[vmcontext.KeyPubTokenExpires] = testEpoch.Add(2 * time.Minute).Format(time.RFC3339)
	og.beforeGetVMByID = func(f *fakeOneGate, id, n int) {
		if n == 5 { // the acting master minted a new token; master 5 mirrors it first
			f.vms[5].UserTemplate[vmcontext.KeyPubToken] = fresh
			f.vms[5].UserTemplate[vmcontext.KeyPubTokenExpires] = testEpoch.Add(time.Hour).Format(time.RFC3339)
		}
	}
	h := newHarness(t, og)
	if err := h.run(); err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, h.logs)
	}
	cfg := h.kadm.configs["join"]
	if !strings.Contains(cfg, fresh) || strings.Contains(cfg, dying) {
		t.Errorf("joined with the wrong token:\n%s", cfg)
	}
	if !strings.Contains(cfg, "10.0.0.15:6443") {
		t.Errorf("did not join through master 5:\n%s", cfg)
	}
	if !strings.Contains(h.logs.String(), "within the 5m0s safety margin; waiting for a fresh one") {
		t.Errorf("no clear message while waiting:\n%s", h.logs)
	}
	if strings.Contains(h.logs.String(), "0123456789abcdef") {
		t.Error("a token leaked into the logs")
	}
}

// TestWorkerJudgesTheTokenOnTheMastersClock: a worker whose clock runs
// far ahead of the master's (no NTP yet at first boot) joins with a token
// the master just minted, for the shortest and the default TTL: its life
// is read on the master's clock, through the master's published API
// address, and the skew is logged.
func TestWorkerJudgesTheTokenOnTheMastersClock(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ttl, fast time.Duration
	}{
		{15 * time.Minute, 56 * time.Minute},
		{time.Hour, 56 * time.Minute},
		{time.Hour, 3 * time.Hour},
		{15 * time.Minute, -2 * time.Hour}, // this VM slow: fine before, fine now
	} {
		og := newService(8, []int{3}, []int{8})
		const tok = "aaaaaa.0123456789abcdef"
		og.publishMasterData(3, tok, strings.Repeat("ab", 32))
		masterNow := testEpoch.Add(-c.fast)
		og.vms[3].UserTemplate[vmcontext.KeyPubTokenExpires] = masterNow.Add(c.ttl).Format(time.RFC3339)
		h := newHarness(t, og)
		h.masterClock = &fakeMasterClock{local: h.clock, offset: -c.fast}
		if err := h.run(); err != nil {
			t.Fatalf("TTL %s, this VM %s fast: %v\n%s", c.ttl, c.fast, err, h.logs)
		}
		if cfg := h.kadm.configs["join"]; !strings.Contains(cfg, tok) {
			t.Errorf("TTL %s, this VM %s fast: joined without the token:\n%s", c.ttl, c.fast, cfg)
		}
		if len(h.masterClock.reads) == 0 || h.masterClock.reads[0].String() != "10.0.0.13:6443" {
			t.Errorf("read the master's clock at %v, want its API server 10.0.0.13:6443", h.masterClock.reads)
		}
		if want := "clocks disagree: this VM's clock runs"; !strings.Contains(h.logs.String(), want) {
			t.Errorf("TTL %s, this VM %s fast: the skew was not logged:\n%s", c.ttl, c.fast, h.logs)
		}
	}
}

// TestStaleTokenOnTheMastersClock: a worker whose clock runs an hour
// behind the master's sees a dying token as fresh on its own clock; on
// the master's it waits, says why with the skew, and joins with the fresh
// token the master publishes next.
func TestStaleTokenOnTheMastersClock(t *testing.T) {
	t.Parallel()
	og := newService(8, []int{3}, []int{8})
	const dying, fresh = "aaaaaa.0123456789abcdef", "bbbbbb.0123456789abcdef"
	og.publishMasterData(3, dying, strings.Repeat("ab", 32))
	masterNow := testEpoch.Add(time.Hour)
	og.vms[3].UserTemplate[vmcontext.KeyPubTokenExpires] = masterNow.Add(2 * time.Minute).Format(time.RFC3339)
	og.beforeGetVMByID = func(f *fakeOneGate, id, n int) {
		if n == 3 {
			f.vms[3].UserTemplate[vmcontext.KeyPubToken] = fresh
			f.vms[3].UserTemplate[vmcontext.KeyPubTokenExpires] = masterNow.Add(time.Hour).Format(time.RFC3339)
		}
	}
	h := newHarness(t, og)
	h.masterClock = &fakeMasterClock{local: h.clock, offset: time.Hour}
	if err := h.run(); err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, h.logs)
	}
	if cfg := h.kadm.configs["join"]; !strings.Contains(cfg, fresh) || strings.Contains(cfg, dying) {
		t.Errorf("joined with the wrong token:\n%s", cfg)
	}
	if want := "by the master's clock (this VM's clock runs 1h0m0s behind the master's), within the 5m0s safety margin"; !strings.Contains(h.logs.String(), want) {
		t.Errorf("no clear message with the skew:\n%s", h.logs)
	}
}

// TestUnreadableMasterClockLeavesTheExpiryToKubeadm: when the master's
// clock cannot be read, the worker never falls back to its own clock: it
// joins, says so once, and kubeadm judges the token.
func TestUnreadableMasterClockLeavesTheExpiryToKubeadm(t *testing.T) {
	t.Parallel()
	og := newService(8, []int{3}, []int{8})
	const tok = "aaaaaa.0123456789abcdef"
	og.publishMasterData(3, tok, strings.Repeat("ab", 32))
	og.vms[3].UserTemplate[vmcontext.KeyPubTokenExpires] = testEpoch.Add(-time.Hour).Format(time.RFC3339)
	h := newHarness(t, og)
	h.masterClock = &fakeMasterClock{local: h.clock, err: errors.New("connection refused")}
	if err := h.run(); err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, h.logs)
	}
	if !strings.Contains(h.kadm.configs["join"], tok) {
		t.Error("did not join")
	}
	if n := strings.Count(h.logs.String(), "cannot read the master's clock; leaving the expiry to kubeadm"); n != 1 {
		t.Errorf("said %d times that the clock was unreadable:\n%s", n, h.logs)
	}
}

// TestGrantJudgedOnTheMastersClock: a joining master judges the
// certificate-key grant on the granting master's clock. Running 2 h fast,
// it opens a grant just made for an hour; running an hour slow, it waits
// out a grant expired on the master's clock, says so with the skew, and
// opens the one granted next.
func TestGrantJudgedOnTheMastersClock(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		offset   time.Duration // the master's clock minus this VM's
		first    time.Duration // the first grant's life left on the master's clock
		wantWait string
	}{
		"this VM 2h fast, grant just made": {-2 * time.Hour, time.Hour, ""},
		"this VM 1h slow, grant expired":   {time.Hour, -time.Minute, "VM 3's grant expired 1m0s ago by its clock (this VM's clock runs 1h0m0s behind the master's)"},
	} {
		og := newService(5, []int{3, 5}, nil)
		h := newHarness(t, og)
		h.masterClock = &fakeMasterClock{local: h.clock, offset: c.offset}
		caHash, _ := kubeadm.CACertHash(h.kadm.caPEM)
		og.publishMasterData(3, "abcdef.0123456789abcdef", caHash)
		h.cfg.Endpoint = vmcontext.LocalBalancer
		og.vms[3].UserTemplate[vmcontext.KeyPubEndpoint] = vmcontext.LocalBalancer
		grants := 0
		og.beforeGetVMByID = func(f *fakeOneGate, _, _ int) {
			r := f.vms[5].UserTemplate[vmcontext.KeyPubRecipient]
			if r == "" || grants == 2 || grants == 1 && c.wantWait == "" {
				return
			}
			life := c.first
			if grants == 1 {
				life = time.Hour // serve replaced the expired grant
			}
			grants++
			g, err := certgrant.Seal(5, r, h.clock.Now().Add(c.offset+life), certgrant.Payload{
				CertificateKey: vmcontext.NewSecret(testCertKey), Token: vmcontext.NewSecret("abcdef.0123456789abcdef")})
			if err != nil {
				panic(err)
			}
			f.vms[3].UserTemplate[vmcontext.KeyPubCertKey] = g.String()
		}
		if err := h.run(); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, h.logs)
		}
		if !strings.Contains(h.kadm.configs["join"], "certificateKey: "+testCertKey) {
			t.Errorf("%s: joined without the certificate key", name)
		}
		if c.wantWait != "" && !strings.Contains(h.logs.String(), c.wantWait) {
			t.Errorf("%s: no clear reason to wait:\n%s", name, h.logs)
		}
	}
}
