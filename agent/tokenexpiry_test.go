package agent

import (
	"strings"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

func TestStaleToken(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for name, c := range map[string]struct {
		expires string
		want    string
	}{
		"none published":       {"", ""},
		"an hour left":         {"2026-11-22T13:00:00Z", ""},
		"just over the margin": {"2026-11-22T12:05:01Z", ""},
		"other zone, fresh":    {"2026-11-22T14:00:00+01:00", ""},
		"within the margin":    {"2026-11-22T12:04:59Z", "within the 5m0s safety margin; waiting for a fresh one"},
		"expired":              {"2026-11-22T11:00:00Z", "expires at 2026-11-22T11:00:00Z, -1h0m0s from now"},
		"malformed":            {"tomorrow", "malformed ONEGATE_K8S_TOKEN_EXPIRES"},
	} {
		vm := &onegate.VM{UserTemplate: map[string]string{vmcontext.KeyPubTokenExpires: c.expires}}
		got := staleToken(vm, now)
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
