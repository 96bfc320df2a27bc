package serve

import (
	"context"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Elector decides which master acts for the cluster.
type Elector interface {
	// Run campaigns until ctx ends. lead runs for each term, with a context
	// that ends when the term ends; observed reports the current leader.
	// A term's lead may still be returning when the next term's starts
	// (client-go's does not wait for it); the Runner makes them take turns.
	Run(ctx context.Context, lead func(term context.Context), observed func(leader string))
	Identity() string
}

// Who acts: the holder of the Lease kube-system/onekube-serve. Every
// master's serve campaigns; client-go's leader election renews the lease
// every RetryPeriod and gives it up if it cannot renew within
// RenewDeadline, so a dead or partitioned master stops acting before
// another can take over (LeaseDuration after its last renewal). Without
// etcd quorum nobody can hold the lease, and nobody acts: the loops that
// act (tokens, node clean-up) are exactly those that must not run against
// a cluster that cannot write.
const (
	LeaseNamespace = "kube-system"
	LeaseName      = "onekube-serve"
)

// LeaseTimings are the election's durations.
type LeaseTimings struct {
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// DefaultLeaseTimings are kube-controller-manager's defaults.
var DefaultLeaseTimings = LeaseTimings{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}

// LeaseElector campaigns for the Lease through the API server.
type LeaseElector struct {
	Client kubernetes.Interface
	// ID is this master's identity in the lease (its node name).
	ID      string
	Timings LeaseTimings
	Log     *slog.Logger
}

var _ Elector = (*LeaseElector)(nil)

// Identity is the name this master campaigns under.
func (e *LeaseElector) Identity() string { return e.ID }

// Run campaigns again after each lost term, until ctx ends.
func (e *LeaseElector) Run(ctx context.Context, lead func(context.Context), observed func(string)) {
	t := e.Timings
	if t == (LeaseTimings{}) {
		t = DefaultLeaseTimings
	}
	log := e.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: LeaseNamespace, Name: LeaseName},
		Client:     e.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: e.ID},
	}
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   t.LeaseDuration,
			RenewDeadline:   t.RenewDeadline,
			RetryPeriod:     t.RetryPeriod,
			ReleaseOnCancel: true,
			Name:            LeaseName,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: lead,
				OnStoppedLeading: func() {},
				OnNewLeader:      observed,
			},
		})
		if err != nil {
			// Only a bad configuration gets here; retrying cannot help.
			log.Error("leader election misconfigured", "error", err)
			return
		}
		le.Run(ctx)
		if ctx.Err() == nil {
			log.Warn("lost the serve lease; campaigning again")
		}
	}
}
