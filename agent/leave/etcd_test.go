package leave

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/onekube/onekube/agent/etcdm"
)

// fakeEtcd decides removals the way etcdm.Client does, over a fixed
// member list (etcdm.CheckRemoval), and records what it removed.
type fakeEtcd struct {
	members []etcdm.Member
	fail    error
	removed []netip.Addr
}

func (f *fakeEtcd) RemoveMember(_ context.Context, ip netip.Addr) error {
	if f.fail != nil {
		return f.fail
	}
	if err := etcdm.CheckRemoval(f.members, ip); err != nil {
		return err
	}
	f.removed = append(f.removed, ip)
	return nil
}

func members(spec string) []etcdm.Member {
	var out []etcdm.Member
	for i, f := range strings.Fields(spec) {
		ip := "10.0.0." + string(rune('1'+i))
		out = append(out, etcdm.Member{ID: uint64(i + 1), Name: "m" + ip, PeerURLs: []string{etcdm.PeerURL(netip.MustParseAddr(ip))},
			Started: true, Healthy: f == "up", Learner: f == "learner"})
	}
	return out
}

// A terminating master removes its own member first, as kubeadm reset
// does, but only while the others keep a healthy majority, never the
// last member; a poweroff (drain mode) keeps it, the VM comes back.
// Through Run with no Node by that name: the Node part has nothing to do,
// the etcd part still runs.
func TestTerminatingMasterRemovesItsOwnEtcdMember(t *testing.T) {
	self := netip.MustParseAddr("10.0.0.1")
	cases := []struct {
		name    string
		mode    Mode
		members string // this master is the first
		fail    error
		removed bool
		kept    string
	}{
		{"three healthy", ModeTerminate, "up up up", nil, true, ""},
		{"two healthy", ModeTerminate, "up up", nil, true, ""},
		{"the last member", ModeTerminate, "up", nil, false, "would break quorum"},
		{"a sibling down: quorum would go", ModeTerminate, "up up down", nil, false, "would break quorum"},
		{"quorum lost already", ModeTerminate, "up down down", nil, false, "would break quorum"},
		{"five, one down", ModeTerminate, "up up up up down", nil, true, ""},
		{"a learner does not vote", ModeTerminate, "up learner", nil, false, "would break quorum"},
		{"etcd unreachable", ModeTerminate, "up up up", errors.New("etcdserver: unhealthy cluster"), false, "removing the etcd member failed"},
		{"poweroff keeps it", ModeDrain, "up up up", nil, false, ""},
		{"reboot keeps it", ModeNone, "up up up", nil, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeEtcd{members: members(c.members), fail: c.fail}
			cs := fake.NewClientset()
			res, err := Run(context.Background(), Options{Client: cs, Node: "master-1", Mode: c.mode, Etcd: f, EtcdPeer: self})
			if err != nil {
				t.Fatal(err)
			}
			if res.EtcdRemoved != c.removed || (len(f.removed) == 1) != c.removed {
				t.Errorf("removed %t (%v), want %t", res.EtcdRemoved, f.removed, c.removed)
			}
			if c.kept == "" && res.EtcdKept != "" || c.kept != "" && !strings.Contains(res.EtcdKept, c.kept) {
				t.Errorf("kept %q, want %q", res.EtcdKept, c.kept)
			}
		})
	}
}
