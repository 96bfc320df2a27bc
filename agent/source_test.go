package agent

import (
	"encoding/base64"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

func TestConfigFromVars(t *testing.T) {
	t.Parallel()
	// VM 42 of role "worker" with two NICs: ETH0 on "public", ETH1 on "k8s".
	self := func(role string) *onegate.VM {
		return &onegate.VM{ID: 42, UserTemplate: map[string]string{vmcontext.KeyRoleName: role},
			NICs: []onegate.NIC{
				{Name: "NIC0", IP: "192.0.2.10", MAC: "02:00:c0:00:02:0a", Network: "public"},
				{Name: "NIC1", IP: "10.1.0.7", MAC: "02:00:0a:01:00:07", Network: "k8s"},
			}}
	}
	base := func(kv ...string) vmcontext.Vars {
		v := vmcontext.Vars{"ETH0_IP": "192.0.2.10", "ETH0_MASK": "255.255.255.0", "ETH0_MAC": "02:00:c0:00:02:0a",
			"ETH1_IP": "10.1.0.7", "ETH1_MAC": "02:00:0a:01:00:07", "ETH1_IP6_ULA": "fd00::7"}
		for i := 0; i+1 < len(kv); i += 2 {
			v[kv[i]] = kv[i+1]
		}
		return v
	}
	defaults := Config{MasterRole: "master", Address: netip.MustParseAddr("192.0.2.10"), Port: 6443,
		PodsNetwork: netip.MustParsePrefix("10.244.0.0/16"), ServicesNetwork: netip.MustParsePrefix("10.96.0.0/12"),
		NodeName: "worker-42", CNI: "flannel", TaintedMaster: true, TokenTTL: time.Hour}
	with := func(f func(*Config)) Config { c := defaults; f(&c); return c }
	cases := map[string]struct {
		vars    vmcontext.Vars
		self    *onegate.VM
		want    Config
		wantErr string
	}{
		"defaults: first NIC, name from the role": {vars: base(), self: self("worker"), want: defaults},
		"role with underscores":                   {vars: base(), self: self("GPU_Workers"), want: with(func(c *Config) { c.NodeName = "gpu-workers-42" })},
		"role that is no DNS label":               {vars: base(), self: self("w.1"), want: with(func(c *Config) { c.NodeName = "node-42" })},
		"address by CIDR, a prefix, other settings": {
			vars: base(vmcontext.KeyAddress, "10.1.0.0/16", vmcontext.KeyNodeName, "n1", vmcontext.KeyMasterRole, "cp", vmcontext.KeyTokenTTL, "2h"),
			self: self("worker"),
			want: with(func(c *Config) {
				c.MasterRole, c.Address, c.NIC, c.NodeName, c.TokenTTL = "cp", netip.MustParseAddr("10.1.0.7"), 1, "n1-42", 2*time.Hour
			}),
		},
		"address by network name": {vars: base(vmcontext.KeyAddress, "k8s"), self: self("worker"),
			want: with(func(c *Config) { c.Address, c.NIC = netip.MustParseAddr("10.1.0.7"), 1 })},
		"IPv6 end to end": {
			vars: base(vmcontext.KeyAddress, "fd00::/64", vmcontext.KeyPodsNetwork, "fd10::/56", vmcontext.KeyServicesNet, "fd20::/112"),
			self: self("worker"),
			want: with(func(c *Config) {
				c.Address, c.NIC = netip.MustParseAddr("fd00::7"), 1
				c.PodsNetwork, c.ServicesNetwork = netip.MustParsePrefix("fd10::/56"), netip.MustParsePrefix("fd20::/112")
			}),
		},
		"no ETHn vars: OneGate's NICs": {vars: vmcontext.Vars{vmcontext.KeyAddress: "k8s"}, self: self("worker"),
			want: with(func(c *Config) { c.Address, c.NIC = netip.MustParseAddr("10.1.0.7"), 1 })},
		"IPv6 node, IPv4 networks":   {vars: base(vmcontext.KeyAddress, "fd00::/64"), self: self("worker"), wantErr: "is IPv4 but the node address fd00::7 is IPv6"},
		"IPv6 with calico refused":   {vars: base(vmcontext.KeyAddress, "fd00::/64", vmcontext.KeyPodsNetwork, "fd10::/56", vmcontext.KeyServicesNet, "fd20::/112", vmcontext.KeyCNI, "calico"), self: self("worker"), wantErr: vmcontext.KeyCNI},
		"a bare IP is refused":       {vars: base(vmcontext.KeyAddress, "10.1.0.7"), self: self("worker"), wantErr: "give the network as a CIDR"},
		"unknown network":            {vars: base(vmcontext.KeyAddress, "storage"), self: self("worker"), wantErr: `no NIC is attached to network "storage"`},
		"ttl zero refused":           {vars: base(vmcontext.KeyTokenTTL, "0"), self: self("worker"), wantErr: vmcontext.KeyTokenTTL},
		"ttl above a day refused":    {vars: base(vmcontext.KeyTokenTTL, "25h"), self: self("worker"), wantErr: "25h0m0s is outside 15m to 24h"},
		"ttl below 15m refused":      {vars: base(vmcontext.KeyTokenTTL, "10m"), self: self("worker"), wantErr: "10m0s is outside 15m to 24h"},
		"bad settings":               {vars: base(vmcontext.KeyPodsNetwork, "nope"), self: self("worker"), wantErr: vmcontext.KeyPodsNetwork},
		"no address anywhere":        {vars: vmcontext.Vars{}, self: &onegate.VM{ID: 42}, wantErr: vmcontext.KeyAddress},
		"prefix too long for a name": {vars: base(vmcontext.KeyNodeName, strings.Repeat("a", 41)), self: self("worker"), wantErr: vmcontext.KeyNodeName},
	}
	vip, err := ConfigFromVars(vmcontext.Vars{vmcontext.KeyControlPlaneEP: "10.1.0.100", "ETH0_IP": "192.0.2.10", "ETH0_MAC": "02:00:c0:00:02:0a"}, self("worker"), "worker")
	if err != nil || vip.Endpoint != "10.1.0.100:6443" {
		t.Errorf("user endpoint: %q, %v", vip.Endpoint, err)
	}
	for name, c := range cases {
		// The test's VMs carry their role in ROLE_NAME; discovery passes
		// the role the service document lists.
		got, err := ConfigFromVars(c.vars, c.self, c.self.UserTemplate[vmcontext.KeyRoleName])
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: err = %v, want %q", name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if want := vmcontext.LocalBalancer; c.vars[vmcontext.KeyControlPlaneEP] == "" && got.Endpoint != want {
			t.Errorf("%s: endpoint %q, want the local balancer %s", name, got.Endpoint, want)
		}
		got.Endpoint, got.Selector = "", vmcontext.AddressSelector{}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, c.want)
		}
	}
}

// TestContextSourceReadsOneGateCA: a private CA in the context reaches the
// OneGate connection; a malformed one stops the boot before any request.
func TestContextSourceReadsOneGateCA(t *testing.T) {
	t.Parallel()
	const pemText = "-----BEGIN CERTIFICATE-----\nMIIBAA==\n-----END CERTIFICATE-----\n"
	dir := t.TempDir()
	write := func(ca string) string {
		p := filepath.Join(dir, "context.sh")
		body := "ONEGATE_ENDPOINT='https://gate:5030'\nVMID='7'\nONEGATE_TOKEN='tok-tok-tok'\nONEKUBE_ONEGATE_CA='" + ca + "'\n"
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	getenv := func(string) string { return "" }
	src, err := ContextSource(system.Root(dir), write(base64.StdEncoding.EncodeToString([]byte(pemText))), getenv)(t.Context())
	if err != nil || string(src.OneGateCA) != pemText {
		t.Fatalf("source: %+v, %v", src, err)
	}
	if _, err := ContextSource(system.Root(dir), write("bogus!"), getenv)(t.Context()); err == nil || !strings.Contains(err.Error(), vmcontext.KeyOneGateCA) {
		t.Errorf("bad CA: %v", err)
	}
}
