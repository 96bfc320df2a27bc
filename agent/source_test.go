package agent

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
)

func TestConfigFromVars(t *testing.T) {
	t.Parallel()
	host := func() (string, error) { return "Worker-1.", nil }
	noHost := func() (string, error) { return "", errors.New("no hostname") }
	base := func(kv ...string) vmcontext.Vars {
		v := vmcontext.Vars{"ETH0_IP": "192.0.2.10", "ETH0_MASK": "255.255.255.0", "ETH1_IP": "10.1.0.7"}
		for i := 0; i+1 < len(kv); i += 2 {
			v[kv[i]] = kv[i+1]
		}
		return v
	}
	cases := map[string]struct {
		vars     vmcontext.Vars
		hostname func() (string, error)
		want     Config
		wantErr  string
	}{
		"defaults": {
			vars: base(), hostname: host,
			want: Config{MasterRole: "master", Address: netip.MustParseAddr("192.0.2.10"), Port: 6443,
				PodsNetwork: netip.MustParsePrefix("10.244.0.0/16"), ServicesNetwork: netip.MustParsePrefix("10.96.0.0/12"),
				NodeName: "worker-1", CNI: "flannel", TaintedMaster: true, TokenTTL: 24 * time.Hour},
		},
		"address by CIDR, explicit name": {
			vars:     base(vmcontext.KeyAddress, "10.1.0.0/16", vmcontext.KeyNodeName, "n1", vmcontext.KeyMasterRole, "cp", vmcontext.KeyTokenTTL, "2h"),
			hostname: noHost,
			want: Config{MasterRole: "cp", Address: netip.MustParseAddr("10.1.0.7"), Port: 6443,
				PodsNetwork: netip.MustParsePrefix("10.244.0.0/16"), ServicesNetwork: netip.MustParsePrefix("10.96.0.0/12"),
				NodeName: "n1", CNI: "flannel", TaintedMaster: true, TokenTTL: 2 * time.Hour},
		},
		"ttl zero refused": {vars: base(vmcontext.KeyTokenTTL, "0"), hostname: host, wantErr: vmcontext.KeyTokenTTL},
		"bad settings":     {vars: base(vmcontext.KeyPodsNetwork, "nope"), hostname: host, wantErr: vmcontext.KeyPodsNetwork},
		"no address":       {vars: vmcontext.Vars{}, hostname: host, wantErr: vmcontext.KeyAddress},
		"no name, no host": {vars: base(), hostname: noHost, wantErr: vmcontext.KeyNodeName},
	}
	for name, c := range cases {
		got, err := ConfigFromVars(c.vars, c.hostname)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: err = %v, want mention of %s", name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, c.want)
		}
	}
}
