package context_test

import (
	"net/netip"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
)

var twoNICs = vmcontext.Vars{
	"ETH0_IP": "192.168.122.10", "ETH0_MASK": "255.255.255.0", "ETH0_NETWORK": "192.168.122.0",
	"ETH0_GATEWAY": "192.168.122.1", "ETH0_MAC": "02:00:c0:a8:7a:0a", "ETH0_DNS": "192.168.122.1", "ETH0_MTU": "1500",
	"ETH10_IP": "10.0.0.5", "ETH10_MASK": "255.255.0.0", "ETH10_IP6": "2001:db8::5",
	"ETH0_ALIAS0_IP": "192.168.122.99", "ETHX_IP": "1.2.3.4", "ETH01_IP": "9.9.9.9", "ETH1": "x",
}

func TestNICs(t *testing.T) {
	t.Parallel()
	nics := twoNICs.NICs()
	if len(nics) != 2 {
		t.Fatalf("NICs = %+v, want ETH0 and ETH10 only", nics)
	}
	n0, n10 := nics[0], nics[1]
	if n0.Index != 0 || n0.IP != netip.MustParseAddr("192.168.122.10") || n0.Mask != "255.255.255.0" ||
		n0.Network != "192.168.122.0" || n0.Gateway != "192.168.122.1" || n0.MAC != "02:00:c0:a8:7a:0a" ||
		n0.DNS != "192.168.122.1" || n0.MTU != "1500" {
		t.Errorf("ETH0 = %+v", n0)
	}
	if n10.Index != 10 || n10.IP != netip.MustParseAddr("10.0.0.5") || n10.IP6 != netip.MustParseAddr("2001:db8::5") {
		t.Errorf("ETH10 = %+v", n10)
	}
	if p, ok := n10.Prefix(); !ok || p != netip.MustParsePrefix("10.0.0.0/16") {
		t.Errorf("ETH10 prefix = %v %v", p, ok)
	}
	if _, ok := (vmcontext.NICInfo{IP: netip.MustParseAddr("10.0.0.1"), Mask: "255.0.255.0"}).Prefix(); ok {
		t.Error("non-contiguous mask accepted")
	}
}
