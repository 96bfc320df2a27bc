package context_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
)

func TestParseAddressSelector(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw, want, err string
	}{
		{"", "", ""},
		{" 10.0.0.0/24 ", "10.0.0.0/24", ""},
		{"fd00:1::/64", "fd00:1::/64", ""},
		{"private", "private", ""},
		{"Service Net 2", "Service Net 2", ""},
		{"10.0.0.5", "", "one IP, which cannot be every VM's address; give the network as a CIDR, e.g. 10.0.0.0/24"},
		{"fd00::5", "", "e.g. fd00::/64"},
		{"10.0.0.5/24", "", "did you mean 10.0.0.0/24"},
		{"10.0.0/8x", "", "neither a CIDR"},
		{"a\x01b", "", "neither a CIDR"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			got, err := vmcontext.ParseAddressSelector(tt.raw)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got.String() != tt.want {
				t.Errorf("= %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestAddressSelectorPick(t *testing.T) {
	t.Parallel()
	nics := vmcontext.Vars{
		"ETH0_IP": "192.168.122.10", "ETH0_MASK": "255.255.255.0", "ETH0_MAC": "02:00:c0:a8:7a:0a",
		"ETH1_IP": "10.0.0.5", "ETH1_MASK": "255.255.0.0", "ETH1_IP6": "2001:db8::5", "ETH1_IP6_ULA": "fd00::5",
		"ETH2_IP6": "2001:db8:2::7",
	}.NICs()
	nics[0].NetworkName, nics[1].NetworkName = "public", "k8s"
	noNames := vmcontext.Vars{"ETH0_IP": "10.0.0.5"}.NICs()
	tests := []struct {
		sel  string
		nics []vmcontext.NICInfo
		want string
		nic  int
		err  string
	}{
		{"", nics, "192.168.122.10", 0, ""},
		{"", nics[2:], "2001:db8:2::7", 2, ""}, // an IPv6-only first NIC
		{"10.0.0.0/8", nics, "10.0.0.5", 1, ""},
		{"2001:db8::/64", nics, "2001:db8::5", 1, ""},
		{"fd00::/8", nics, "fd00::5", 1, ""},
		{"k8s", nics, "10.0.0.5", 1, ""},
		{"public", nics, "192.168.122.10", 0, ""},
		{"172.16.0.0/12", nics, "", 0, `no NIC has an address in 172.16.0.0/12 (NICs: ETH0 192.168.122.10/24 (network "public"), ETH1 10.0.0.5/16 2001:db8::5 fd00::5 (network "k8s"), ETH2 2001:db8:2::7)`},
		{"storage", nics, "", 0, `no NIC is attached to network "storage"`},
		{"storage", noNames, "", 0, "OneGate reported no network names"},
		{"", nil, "", 0, "the VM has no NIC with an address"},
	}
	for _, tt := range tests {
		t.Run(tt.sel, func(t *testing.T) {
			t.Parallel()
			sel, err := vmcontext.ParseAddressSelector(tt.sel)
			if err != nil {
				t.Fatal(err)
			}
			nic, got, err := sel.Pick(tt.nics)
			if tt.err != "" {
				var se *vmcontext.SettingError
				if !errors.As(err, &se) || se.Key != vmcontext.KeyAddress || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want %q for %s", err, tt.err, vmcontext.KeyAddress)
				}
				return
			}
			if err != nil || got.String() != tt.want || nic.Index != tt.nic {
				t.Errorf("Pick = ETH%d %v, %v; want ETH%d %s", nic.Index, got, err, tt.nic, tt.want)
			}
		})
	}
}

func TestCheckFamilies(t *testing.T) {
	t.Parallel()
	v4, v6 := netip.MustParseAddr("10.0.0.5"), netip.MustParseAddr("fd00::5")
	p4, s4 := netip.MustParsePrefix("10.244.0.0/16"), netip.MustParsePrefix("10.96.0.0/12")
	p6, s6 := netip.MustParsePrefix("fd10::/56"), netip.MustParsePrefix("fd20::/112")
	if err := vmcontext.CheckFamilies(v4, p4, s4); err != nil {
		t.Error(err)
	}
	if err := vmcontext.CheckFamilies(v6, p6, s6); err != nil {
		t.Error(err)
	}
	err := vmcontext.CheckFamilies(v6, p4, s4)
	var se *vmcontext.SettingError
	if !errors.As(err, &se) || se.Key != vmcontext.KeyPodsNetwork || !strings.Contains(err.Error(), "10.244.0.0/16 is IPv4 but the node address fd00::5 is IPv6; set IPv6 pod and service networks") {
		t.Errorf("v6 node, v4 networks: %v", err)
	}
	if err := vmcontext.CheckFamilies(v4, p4, s6); !errors.As(err, &se) || se.Key != vmcontext.KeyServicesNet {
		t.Errorf("v4 node, v6 services: %v", err)
	}
}

func TestNodeName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		prefix, role string
		want         string
	}{
		{"", "worker", "worker-42"},
		{"", "Big_Workers", "big-workers-42"},
		{"", "gpu.nodes", "node-42"},             // not a DNS label
		{"", "-edge", "node-42"},                 // starts with '-'
		{"", strings.Repeat("w", 41), "node-42"}, // too long for <prefix>-<VMID> in 63
		{"k8s", "worker", "k8s-42"},
	}
	for _, tt := range tests {
		if got := vmcontext.NodeName(tt.prefix, tt.role, 42); got != tt.want {
			t.Errorf("NodeName(%q, %q) = %q, want %q", tt.prefix, tt.role, got, tt.want)
		}
	}
	if err := vmcontext.CheckNodePrefix(strings.Repeat("a", vmcontext.MaxNodePrefix)); err != nil {
		t.Errorf("a %d-character prefix: %v", vmcontext.MaxNodePrefix, err)
	}
}

func TestOneGateCA(t *testing.T) {
	t.Parallel()
	const pemText = "-----BEGIN CERTIFICATE-----\nMIIBAA==\n-----END CERTIFICATE-----\n"
	if b, err := (vmcontext.Vars{}).OneGateCA(); b != nil || err != nil {
		t.Errorf("unset: %q, %v", b, err)
	}
	if b, err := (vmcontext.Vars{vmcontext.KeyOneGateCA: pemText}).OneGateCA(); err != nil || string(b) != strings.TrimSpace(pemText) {
		t.Errorf("PEM: %q, %v", b, err)
	}
	b64 := "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJBQT09Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"
	if b, err := (vmcontext.Vars{vmcontext.KeyOneGateCA: b64}).OneGateCA(); err != nil || string(b) != pemText {
		t.Errorf("base64: %q, %v", b, err)
	}
	for _, bad := range []string{"not pem !", "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUJBQT09Ci0tLS0tRU5EIFBSSVZBVEUgS0VZLS0tLS0K"} {
		if _, err := (vmcontext.Vars{vmcontext.KeyOneGateCA: bad}).OneGateCA(); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzParseAddressSelector: any template value either is refused or
// parses to a selector that reads back the same.
func FuzzParseAddressSelector(f *testing.F) {
	for _, s := range []string{"", "10.0.0.0/24", "fd00::/64", "private", "10.0.0.5", "a/b", " x "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		sel, err := vmcontext.ParseAddressSelector(raw)
		if err != nil {
			return
		}
		again, err := vmcontext.ParseAddressSelector(sel.String())
		if err != nil || again != sel {
			t.Fatalf("%q -> %q -> %+v, %v", raw, sel.String(), again, err)
		}
		if _, _, err := sel.Pick(nil); err == nil {
			t.Fatal("picked an address among no NICs")
		}
	})
}

// FuzzOneGateCA: whatever the context holds, the result is nil or PEM
// certificates only.
func FuzzOneGateCA(f *testing.F) {
	f.Add("-----BEGIN CERTIFICATE-----\nMIIBAA==\n-----END CERTIFICATE-----\n")
	f.Add("LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJBQT09Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K")
	f.Add("garbage")
	f.Fuzz(func(t *testing.T, raw string) {
		b, err := vmcontext.Vars{vmcontext.KeyOneGateCA: raw}.OneGateCA()
		if err != nil || b == nil {
			return
		}
		if !strings.Contains(string(b), "-----BEGIN CERTIFICATE-----") {
			t.Fatalf("accepted %q", b)
		}
	})
}
