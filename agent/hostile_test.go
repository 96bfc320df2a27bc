package agent

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/onekube/onekube/agent/state"
	vmcontext "github.com/onekube/onekube/context"
)

// hostileZone is 100 KB of an IPv6 zone that tries to forge log lines.
var hostileZone = strings.Repeat("eth0\nlevel=ERROR msg=forged\r\x1b[2J\u202e", 100_000/40)

// TestHostileMasterAddressIsBoundedEverywhere: what a sibling publishes as
// the master's address (any VM of the service may write another's
// USER_TEMPLATE) reaches this worker's stderr, its state file and its
// OneGate report only bounded, on one line, printable; an address with a
// zone no interface name could have is refused as malformed.
func TestHostileMasterAddressIsBoundedEverywhere(t *testing.T) {
	const bound = 2048
	for _, c := range []struct {
		name  string
		vm    int
		key   string
		value string
	}{
		{"link-local address, huge zone", 3, vmcontext.KeyPubMaster, "fe80::1%" + hostileZone},
		{"global address, huge zone", 3, vmcontext.KeyPubMaster, "2001:db8::13%" + hostileZone},
		{"not an address", 3, vmcontext.KeyPubMaster, hostileZone},
		{"a failure report", 3, vmcontext.KeyPubError, hostileZone},
		{"this VM's ROLE_NAME", 8, vmcontext.KeyRoleName, "worker" + hostileZone},
	} {
		t.Run(c.name, func(t *testing.T) {
			og := newService(8, []int{3}, []int{8})
			og.publishMasterData(3, goodToken, goodHash)
			og.vms[c.vm].UserTemplate[c.key] = c.value
			if c.key == vmcontext.KeyPubError {
				delete(og.vms[3].UserTemplate, vmcontext.KeyReady)
				og.vms[3].UserTemplate[vmcontext.KeyPubPhase] = PhaseFailed
			}
			h := newHarness(t, og)
			h.tun.MasterTimeout = 2 * time.Minute
			err := h.run()
			if c.vm == 3 && err == nil {
				t.Fatal("joined a master with hostile join data")
			}
			oneLine := func(what, s string) {
				t.Helper()
				if len(s) > bound {
					t.Errorf("%s is %d bytes, want at most %d: %.200q…", what, len(s), bound, s)
				}
				if i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }); i >= 0 {
					t.Errorf("%s carries a control or unprintable character at %d: %.200q…", what, i, s[max(0, i-40):])
				}
			}
			if err != nil {
				oneLine("the error", err.Error())
			}
			for _, l := range strings.Split(strings.TrimSuffix(h.logs.String(), "\n"), "\n") {
				oneLine("a log line", l)
				if strings.HasPrefix(l, "level=ERROR msg=forged") {
					t.Errorf("a forged log line: %.200q", l)
				}
			}
			b, rerr := h.root.ReadFile(state.StateFile)
			if rerr != nil {
				t.Fatal(rerr)
			}
			var st state.State
			if jerr := json.Unmarshal(b, &st); jerr != nil {
				t.Fatal(jerr)
			}
			oneLine("the state's last error", st.LastError)
			if len(b) > 2*bound {
				t.Errorf("state.json is %d bytes", len(b))
			}
			for _, u := range og.updates {
				for _, kv := range u {
					oneLine("OneGate value "+kv.Key, kv.Value)
				}
			}
		})
	}
}
