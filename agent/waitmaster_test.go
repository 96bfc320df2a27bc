package agent

import (
	"net/netip"
	"strings"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

const (
	goodToken = "abcdef.0123456789abcdef"
	goodHash  = "09a9ed14c7e0f4d59b3b2d16c5a1f1e5b0e6c3a1d2f4e5a6b7c8d9e0f1a2b3c4"
)

func masterVM(kv ...string) *onegate.VM {
	ut := map[string]string{
		vmcontext.KeyReady:     "YES",
		vmcontext.KeyPubMaster: "10.0.0.5",
		vmcontext.KeyPubPort:   "6443",
		vmcontext.KeyPubToken:  goodToken,
		vmcontext.KeyPubHash:   goodHash,
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "<unset>" {
			delete(ut, kv[i])
			continue
		}
		ut[kv[i]] = kv[i+1]
	}
	return &onegate.VM{ID: 4, UserTemplate: ut, NICs: []onegate.NIC{
		{Name: "NIC0", IP: "10.0.0.5", IP6ULA: "fd00::5"},
		{Name: "NIC1", IP: "127.0.0.1"}, // oned never leases it; a check must refuse it anyway
	}}
}

func TestReadyMaster(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		vm         *onegate.VM
		wantReason string // substring; "" means ready
		wantAddr   string
		wantPort   int
		wantHash   string
	}{
		"ready":                  {vm: masterVM(), wantAddr: "10.0.0.5", wantPort: 6443, wantHash: goodHash},
		"hash with prefix":       {vm: masterVM(vmcontext.KeyPubHash, "sha256:"+goodHash), wantAddr: "10.0.0.5", wantPort: 6443, wantHash: goodHash},
		"hash upper case":        {vm: masterVM(vmcontext.KeyPubHash, "SHA256:"+strings.ToUpper(goodHash)), wantAddr: "10.0.0.5", wantPort: 6443, wantHash: goodHash},
		"no port: own default":   {vm: masterVM(vmcontext.KeyPubPort, "<unset>"), wantAddr: "10.0.0.5", wantPort: 7443, wantHash: goodHash},
		"ipv6":                   {vm: masterVM(vmcontext.KeyPubMaster, "fd00::5"), wantAddr: "fd00::5", wantPort: 6443, wantHash: goodHash},
		"ipv4-mapped":            {vm: masterVM(vmcontext.KeyPubMaster, "::ffff:10.0.0.5"), wantAddr: "10.0.0.5", wantPort: 6443, wantHash: goodHash},
		"ready lower case":       {vm: masterVM(vmcontext.KeyReady, " yes "), wantAddr: "10.0.0.5", wantPort: 6443, wantHash: goodHash},
		"not ready":              {vm: masterVM(vmcontext.KeyReady, "<unset>"), wantReason: "not READY yet"},
		"ready without keys":     {vm: &onegate.VM{UserTemplate: map[string]string{vmcontext.KeyReady: "YES"}}, wantReason: "missing ONEGATE_K8S_TOKEN, ONEGATE_K8S_HASH, ONEGATE_K8S_MASTER"},
		"bad token":              {vm: masterVM(vmcontext.KeyPubToken, "ABCDEF.0123456789abcdef"), wantReason: "malformed ONEGATE_K8S_TOKEN"},
		"token with admin junk":  {vm: masterVM(vmcontext.KeyPubToken, goodToken+"x"), wantReason: "malformed ONEGATE_K8S_TOKEN"},
		"short hash":             {vm: masterVM(vmcontext.KeyPubHash, goodHash[1:]), wantReason: "malformed ONEGATE_K8S_HASH"},
		"master with port":       {vm: masterVM(vmcontext.KeyPubMaster, "10.0.0.5:6443"), wantReason: "malformed ONEGATE_K8S_MASTER"},
		"master hostname":        {vm: masterVM(vmcontext.KeyPubMaster, "master.example"), wantReason: "malformed ONEGATE_K8S_MASTER"},
		"master unspecified":     {vm: masterVM(vmcontext.KeyPubMaster, "0.0.0.0"), wantReason: "malformed ONEGATE_K8S_MASTER (0.0.0.0 is the unspecified address)"},
		"master loopback":        {vm: masterVM(vmcontext.KeyPubMaster, "127.0.0.1"), wantReason: "127.0.0.1 is a loopback address"},
		"master link-local":      {vm: masterVM(vmcontext.KeyPubMaster, "fe80::1"), wantReason: "fe80::1 is a link-local address"},
		"master with a zone":     {vm: masterVM(vmcontext.KeyPubMaster, "fd00::5%eth0"), wantReason: "fd00::5%eth0 is scoped to an interface"},
		"master, hostile zone":   {vm: masterVM(vmcontext.KeyPubMaster, "fd00::5%eth0\nlevel=ERROR msg=forged"), wantReason: `malformed ONEGATE_K8S_MASTER ("fd00::5%eth0\nlevel=ERROR msg=forged" has a zone that is no interface name)`},
		"rewritten by a sibling": {vm: masterVM(vmcontext.KeyPubMaster, "10.0.0.66"), wantReason: "10.0.0.66 is not an address of VM 4, whose NICs have 10.0.0.5, fd00::5, 127.0.0.1"},
		"port out of range":      {vm: masterVM(vmcontext.KeyPubPort, "70000"), wantReason: "malformed ONEGATE_K8S_PORT"},
		"port not a number":      {vm: masterVM(vmcontext.KeyPubPort, "https"), wantReason: "malformed ONEGATE_K8S_PORT"},
	}
	for name, c := range cases {
		m, reason := readyMaster(c.vm, 7443)
		if c.wantReason != "" {
			if !strings.Contains(reason, c.wantReason) {
				t.Errorf("%s: reason %q, want %q", name, reason, c.wantReason)
			}
			if strings.Contains(reason, goodToken) || strings.Contains(reason, "ABCDEF") {
				t.Errorf("%s: reason echoes a value: %q", name, reason)
			}
			continue
		}
		if reason != "" {
			t.Errorf("%s: not ready: %s", name, reason)
			continue
		}
		if m.Address != netip.MustParseAddr(c.wantAddr) || m.Port != c.wantPort || m.Hash != c.wantHash || m.Token.Reveal() != goodToken {
			t.Errorf("%s: got %+v", name, m)
		}
	}
}

// FuzzReadyMaster: values read from another VM are outside input. Whatever
// they are, readyMaster either rejects them or returns join data that is
// valid to the letter.
func FuzzReadyMaster(f *testing.F) {
	f.Add("YES", "10.0.0.5", "6443", goodToken, goodHash)
	f.Add("YES", "fd00::1", "", goodToken, "sha256:"+goodHash)
	f.Add("no", "", "x", "", "")
	f.Add("YES", "::ffff:10.0.0.1", "1", "aaaaaa.bbbbbbbbbbbbbbbb", strings.ToUpper(goodHash))
	f.Fuzz(func(t *testing.T, ready, master, port, token, hash string) {
		vm := &onegate.VM{ID: 1, UserTemplate: map[string]string{
			vmcontext.KeyReady: ready, vmcontext.KeyPubMaster: master, vmcontext.KeyPubPort: port,
			vmcontext.KeyPubToken: token, vmcontext.KeyPubHash: hash,
		}, NICs: []onegate.NIC{{IP: "10.0.0.5", IP6: "fd00::1"}}}
		m, reason := readyMaster(vm, 6443)
		if reason != "" {
			if token != "" && len(token) > 3 && strings.Contains(reason, token) {
				t.Fatalf("reason echoes the token: %q", reason)
			}
			return
		}
		if !m.Address.IsValid() || m.Address.Zone() != "" || m.Address.Is4In6() || unusableAddress(m.Address) != "" || !ownsAddress(vm, m.Address.String()) {
			t.Fatalf("bad address %v", m.Address)
		}
		if m.Port < 1 || m.Port > 65535 {
			t.Fatalf("bad port %d", m.Port)
		}
		if len(m.Hash) != 64 || strings.ToLower(m.Hash) != m.Hash {
			t.Fatalf("bad hash %q", m.Hash)
		}
		if len(m.Token.Reveal()) != 23 {
			t.Fatalf("bad token length %d", len(m.Token.Reveal()))
		}
	})
}
