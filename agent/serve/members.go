package serve

import (
	"context"
	"fmt"
)

// MemberRemover is etcd membership as the cleanup loop needs it. The HA
// work's agent/etcdm implements it for kubeadm's stacked etcd, where each
// master's member is named after its node.
//
// RemoveMember must refuse, with an error saying why, a removal after
// which the remaining members could not keep quorum (for instance the
// healthy members would be fewer than a majority of the new size), and
// must treat a name that is no member as done. The cleanup loop publishes
// every refusal or failure as ONEGATE_K8S_SERVE_ERROR and keeps the Node,
// so nothing is removed silently and the operator sees what is left.
type MemberRemover interface {
	RemoveMember(ctx context.Context, name string) error
}

// MembersByName removes members by the node name kubeadm gives a stacked
// etcd member, through the address-based, quorum-guarded removal of
// agent/etcdm (the Members interface of the control-plane loop). A name
// that is no member is done already.
type MembersByName struct {
	Etcd Members
}

var _ MemberRemover = MembersByName{}

// RemoveMember implements MemberRemover.
func (m MembersByName) RemoveMember(ctx context.Context, name string) error {
	ms, err := m.Etcd.Members(ctx)
	if err != nil {
		return err
	}
	for _, mem := range ms {
		if mem.Name != name {
			continue
		}
		ip := mem.PeerIP()
		if !ip.IsValid() {
			return fmt.Errorf("etcd member %s has no peer address to remove it by", name)
		}
		return m.Etcd.RemoveMember(ctx, ip)
	}
	return nil
}
