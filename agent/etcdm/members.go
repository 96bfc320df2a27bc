package etcdm

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// Timeouts of the calls; etcd answers within milliseconds when healthy.
const (
	DialTimeout   = 5 * time.Second
	callTimeout   = 5 * time.Second
	healthTimeout = 2 * time.Second
)

// Member is one etcd member as the cluster lists it, with its health.
type Member struct {
	ID         uint64
	Name       string
	PeerURLs   []string
	ClientURLs []string
	Learner    bool
	// Started is false for a member added but never started (no name and
	// no client URLs yet).
	Started bool
	// Healthy means its client URL answered a status request just now.
	Healthy bool
}

// PeerIP is the host of the member's first peer URL, the one kubeadm
// matches members by (util/etcd addMember compares PeerURLs[0]).
func (m Member) PeerIP() netip.Addr {
	if len(m.PeerURLs) == 0 {
		return netip.Addr{}
	}
	u, err := url.Parse(m.PeerURLs[0])
	if err != nil {
		return netip.Addr{}
	}
	a, _ := netip.ParseAddr(u.Hostname())
	return a.Unmap()
}

// State is how a member shows in status: voter, learner, unstarted or
// unhealthy.
func (m Member) State() string {
	switch {
	case !m.Started:
		return "unstarted"
	case !m.Healthy:
		return "unhealthy"
	case m.Learner:
		return "learner"
	}
	return "voter"
}

// Client manages the members.
type Client struct {
	c *clientv3.Client
}

// New connects (lazily: nothing is dialled until a call).
func New(cfg Config) (*Client, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("no etcd endpoint")
	}
	var tlsCfg *tls.Config
	if cfg.CAFile != "" {
		info := transport.TLSInfo{TrustedCAFile: cfg.CAFile, CertFile: cfg.CertFile, KeyFile: cfg.KeyFile}
		var err error
		if tlsCfg, err = info.ClientConfig(); err != nil {
			return nil, fmt.Errorf("etcd client certificates: %w", err)
		}
	}
	cc := clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: DialTimeout,
		TLS:         tlsCfg,
		Logger:      zap.NewNop(),
	}
	if cfg.Dial != nil {
		cc.DialOptions = []grpc.DialOption{grpc.WithContextDialer(cfg.Dial)}
	}
	c, err := clientv3.New(cc)
	if err != nil {
		return nil, fmt.Errorf("etcd client: %w", err)
	}
	return &Client{c: c}, nil
}

// Close ends the connections.
func (c *Client) Close() error { return c.c.Close() }

// Members lists the members and checks the health of each started one,
// concurrently. The list is serializable (the answering member's view):
// a cluster that lost quorum cannot answer a linearizable one, and that is
// exactly when the list is needed to say so.
func (c *Client) Members(ctx context.Context) ([]Member, error) {
	lctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := c.c.MemberList(lctx, clientv3.WithSerializable())
	if err != nil {
		return nil, fmt.Errorf("listing etcd members: %w", err)
	}
	out := make([]Member, len(resp.Members))
	var wg sync.WaitGroup
	for i, m := range resp.Members {
		out[i] = Member{ID: m.ID, Name: m.Name, PeerURLs: m.PeerURLs, ClientURLs: m.ClientURLs, Learner: m.IsLearner,
			Started: m.Name != "" && len(m.ClientURLs) > 0}
		if !out[i].Started {
			continue
		}
		wg.Go(func() { out[i].Healthy = c.healthy(ctx, out[i].ClientURLs) })
	}
	wg.Wait()
	slices.SortFunc(out, func(a, b Member) int { return a.PeerIP().Compare(b.PeerIP()) })
	return out, nil
}

func (c *Client) healthy(ctx context.Context, urls []string) bool {
	for _, u := range urls {
		hctx, cancel := context.WithTimeout(ctx, healthTimeout)
		_, err := c.c.Status(hctx, u)
		cancel()
		if err == nil {
			return true
		}
	}
	return false
}

// ErrQuorum means removing a member would leave the voting members without
// a healthy majority: etcd would stop serving (or already has).
var ErrQuorum = errors.New("removing the etcd member would break quorum")

// QuorumError says what the cluster has and what the removal would leave.
type QuorumError struct {
	PeerIP netip.Addr
	// Voters and Healthy count the voting members now; VotersAfter and
	// HealthyAfter after the removal.
	Voters, Healthy, VotersAfter, HealthyAfter int
}

func (e *QuorumError) Error() string {
	if e.Healthy*2 <= e.Voters {
		return fmt.Sprintf("%v: only %d of %d voting members are healthy, so etcd cannot commit any change; bring members back first", ErrQuorum, e.Healthy, e.Voters)
	}
	return fmt.Sprintf("%v: after removing %s, %d of %d voting members would be healthy, and etcd needs more than half", ErrQuorum, e.PeerIP, e.HealthyAfter, e.VotersAfter)
}

func (e *QuorumError) Unwrap() error { return ErrQuorum }

// CheckRemoval decides whether the members at peerIP may be removed: the
// healthy voters must be a majority now (etcd commits the removal through
// them) and of the voters left after it, at least one of which must
// remain. Learners never count.
func CheckRemoval(members []Member, peerIP netip.Addr) error {
	e := &QuorumError{PeerIP: peerIP}
	for _, m := range members {
		if m.Learner {
			continue
		}
		e.Voters++
		if m.Healthy {
			e.Healthy++
		}
		if m.PeerIP() == peerIP {
			continue
		}
		e.VotersAfter++
		if m.Healthy {
			e.HealthyAfter++
		}
	}
	if e.Healthy*2 <= e.Voters || e.VotersAfter == 0 || e.HealthyAfter*2 <= e.VotersAfter {
		return e
	}
	return nil
}

// RemoveMember removes every member whose peer address is peerIP, after
// CheckRemoval; no such member is no error. The client then talks to the
// other members only. It returns a *QuorumError
// (errors.Is ErrQuorum) when the removal would break quorum.
func (c *Client) RemoveMember(ctx context.Context, peerIP netip.Addr) error {
	members, err := c.Members(ctx)
	if err != nil {
		return err
	}
	var doomed []Member
	for _, m := range members {
		if m.PeerIP() == peerIP.Unmap() {
			doomed = append(doomed, m)
		}
	}
	if len(doomed) == 0 {
		return nil
	}
	if err := CheckRemoval(members, peerIP.Unmap()); err != nil {
		return err
	}
	// Never through a member being removed: it stops as soon as the
	// removal commits, and answers "server stopped" to a removal that
	// succeeded (a master removing its own member). The others are asked,
	// as kubeadm's client asks every member (util/etcd NewFromCluster).
	var others []string
	for _, m := range members {
		if m.PeerIP() != peerIP.Unmap() && m.Started {
			others = append(others, m.ClientURLs...)
		}
	}
	if len(others) > 0 {
		c.c.SetEndpoints(others...)
	}
	for _, m := range doomed {
		rctx, cancel := context.WithTimeout(ctx, callTimeout)
		_, err := c.c.MemberRemove(rctx, m.ID)
		cancel()
		if err != nil {
			return fmt.Errorf("removing etcd member %x (%s): %w", m.ID, peerIP, err)
		}
	}
	return nil
}

// Summary is the members as ONEGATE_K8S_ETCD shows them: "<state>@<peer
// IP>", space-separated, by address.
func Summary(members []Member) string {
	parts := make([]string, 0, len(members))
	for _, m := range members {
		ip := "?"
		if a := m.PeerIP(); a.IsValid() {
			ip = a.String()
		}
		parts = append(parts, m.State()+"@"+ip)
	}
	return strings.Join(parts, " ")
}

// PeerURL is kubeadm's peer URL for an address (util/etcd GetPeerURL).
func PeerURL(a netip.Addr) string {
	return "https://" + net.JoinHostPort(a.String(), strconv.Itoa(2380))
}
