package env

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// VarEtcd is the client URL of a real etcd that holds the simulated
// cluster's membership (an HA simulation): a control plane's init and
// join add its member as kubeadm's etcd-join does (a learner: the
// simulated member never starts, so it can never be promoted), reset
// removes it, and the agent's etcd client manages them for real.
const VarEtcd = "ONEKUBE_STANDIN_ETCD"

// ErrMemberExists is a join meeting a member with its own peer URL: a
// stale member whose data is gone.
var ErrMemberExists = errors.New("an etcd member with this peer URL exists")

func etcdClient() (*clientv3.Client, error) {
	url := os.Getenv(VarEtcd)
	if url == "" {
		return nil, nil
	}
	return clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
}

// withMembers calls fn with a client and the member list. Without
// VarEtcd it does nothing.
func withMembers(fn func(ctx context.Context, c *clientv3.Client, members []*etcdserverpb.Member) error) error {
	c, err := etcdClient()
	if err != nil || c == nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := c.MemberList(ctx)
	if err != nil {
		return fmt.Errorf("listing etcd members: %w", err)
	}
	return fn(ctx, c, list.Members)
}

func hasPeer(m *etcdserverpb.Member, peerURL string) bool {
	return len(m.PeerURLs) > 0 && m.PeerURLs[0] == peerURL
}

// AddMember adds peerURL as a learner, refusing when a member already has
// it. Without VarEtcd it does nothing.
func AddMember(peerURL string) error {
	return withMembers(func(ctx context.Context, c *clientv3.Client, members []*etcdserverpb.Member) error {
		for _, m := range members {
			if hasPeer(m, peerURL) {
				return ErrMemberExists
			}
		}
		if _, err := c.MemberAddAsLearner(ctx, []string{peerURL}); err != nil {
			return fmt.Errorf("adding etcd member %s: %w", peerURL, err)
		}
		return nil
	})
}

// RemoveMember removes the member with peerURL, if any (kubeadm reset's
// remove-etcd-member phase).
func RemoveMember(peerURL string) error {
	return withMembers(func(ctx context.Context, c *clientv3.Client, members []*etcdserverpb.Member) error {
		for _, m := range members {
			if hasPeer(m, peerURL) {
				if _, err := c.MemberRemove(ctx, m.ID); err != nil {
					return fmt.Errorf("removing etcd member %s: %w", peerURL, err)
				}
			}
		}
		return nil
	})
}

// EtcdURL is the client URL the stand-in writes into the etcd manifest:
// the simulation's etcd, or kubeadm's default.
func EtcdURL(advertise string) string {
	if u := os.Getenv(VarEtcd); u != "" {
		return u
	}
	return "https://" + advertise + ":2379"
}
