package serve

import (
	"context"
	"fmt"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// CertLeaseName is the Lease that lets one master at a time renew its
// certificates and restart its static pods: two masters restarting etcd
// at once could lose quorum, two apiservers at once the API.
const CertLeaseName = "onekube-cert-renewal"

// DefaultCertLeaseDuration bounds how long a master that died mid-renewal
// keeps the others waiting; the holder renews the lease before each static
// pod it restarts, and one restart is bounded far below it.
const DefaultCertLeaseDuration = 10 * time.Minute

// certLease is a compare-and-swap lock on a coordination Lease: the
// resourceVersion makes two masters that race for it see a conflict, and
// only one wins. No renewal goroutine: the holder refreshes it between
// steps (hold), and a holder that vanishes loses it after Duration.
type certLease struct {
	client   kubernetes.Interface
	identity string
	duration time.Duration
}

// leaseView is what a master sees of the lease.
type leaseView struct {
	// Reachable is false when the API server could not be asked.
	Reachable bool
	Holder    string
	Expires   time.Time
}

func (l certLease) get(ctx context.Context) (*coordinationv1.Lease, leaseView, error) {
	le, err := l.client.CoordinationV1().Leases(LeaseNamespace).Get(ctx, CertLeaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, leaseView{Reachable: true}, nil
	}
	if err != nil {
		return nil, leaseView{}, err
	}
	v := leaseView{Reachable: true}
	if le.Spec.HolderIdentity != nil {
		v.Holder = *le.Spec.HolderIdentity
	}
	if le.Spec.RenewTime != nil && le.Spec.LeaseDurationSeconds != nil {
		v.Expires = le.Spec.RenewTime.Add(time.Duration(*le.Spec.LeaseDurationSeconds) * time.Second)
	}
	return le, v, nil
}

// view reads the lease; an unreachable API server is a view, not an error.
func (l certLease) view(ctx context.Context) leaseView {
	_, v, err := l.get(ctx)
	if err != nil {
		return leaseView{}
	}
	return v
}

// free reports whether identity may take the lease at now.
func (v leaseView) free(identity string, now time.Time) bool {
	return v.Holder == "" || v.Holder == identity || !now.Before(v.Expires)
}

// A master that is due records its earliest NotAfter on the lease
// (certDuePrefix+identity = "<notAfter>/<seen>", RFC 3339), and a free
// lease goes to the master whose leaves expire first. Without the queue a
// master that renews quickly can take the lease again for its next round
// before a slower one ever wins the race, and the slower one's leaves
// expire while it waits (seen on the bed with leaves of minutes). An entry
// not refreshed within certDueFresh is a master that stopped asking (dead,
// or its credential gone), and is ignored.
const (
	certDuePrefix = "onekube.io/cert-due."
	certDueFresh  = 3 * certsWaitTick
)

// acquire takes or refreshes the lease for identity, whose earliest leaf
// expires at due (zero when it only refreshes a lease it holds). It returns
// false, without error, when another master holds it, won a race for it,
// or is owed it first.
func (l certLease) acquire(ctx context.Context, now, due time.Time) (bool, error) {
	le, v, err := l.get(ctx)
	if err != nil {
		return false, err
	}
	holding := v.Holder == l.identity && now.Before(v.Expires)
	if !v.free(l.identity, now) || (!holding && le != nil && owedFirst(le.Annotations, l.identity, due, now)) {
		l.queue(ctx, le, due, now)
		return false, nil
	}
	secs := int32(l.duration / time.Second) //nolint:gosec // minutes, far below int32
	id, t := l.identity, metav1.NewMicroTime(now)
	leases := l.client.CoordinationV1().Leases(LeaseNamespace)
	if le == nil {
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: LeaseNamespace, Name: CertLeaseName},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &id, LeaseDurationSeconds: &secs, AcquireTime: &t, RenewTime: &t},
		}, metav1.CreateOptions{})
	} else {
		le = le.DeepCopy()
		if v.Holder != l.identity {
			le.Spec.AcquireTime = &t
		}
		delete(le.Annotations, certDuePrefix+l.identity)
		le.Spec.HolderIdentity, le.Spec.LeaseDurationSeconds, le.Spec.RenewTime = &id, &secs, &t
		_, err = leases.Update(ctx, le, metav1.UpdateOptions{})
	}
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("taking the lease %s/%s: %w", LeaseNamespace, CertLeaseName, err)
	}
	return true, nil
}

// queue records identity's due time on the lease; a failure only delays
// its turn, so it is not an error.
func (l certLease) queue(ctx context.Context, le *coordinationv1.Lease, due, now time.Time) {
	if le == nil || due.IsZero() {
		return
	}
	le = le.DeepCopy()
	if le.Annotations == nil {
		le.Annotations = map[string]string{}
	}
	le.Annotations[certDuePrefix+l.identity] = due.UTC().Format(time.RFC3339) + "/" + now.UTC().Format(time.RFC3339)
	_, _ = l.client.CoordinationV1().Leases(LeaseNamespace).Update(ctx, le, metav1.UpdateOptions{})
}

// owedFirst reports whether another master, still asking, recorded leaves
// that expire before due.
func owedFirst(annotations map[string]string, identity string, due, now time.Time) bool {
	for k, val := range annotations {
		other, ok := strings.CutPrefix(k, certDuePrefix)
		if !ok || other == identity {
			continue
		}
		notAfterText, seenText, ok := strings.Cut(val, "/")
		if !ok {
			continue
		}
		notAfter, err1 := time.Parse(time.RFC3339, notAfterText)
		seen, err2 := time.Parse(time.RFC3339, seenText)
		if err1 != nil || err2 != nil || now.Sub(seen) > certDueFresh {
			continue
		}
		if due.IsZero() || notAfter.Before(due) {
			return true
		}
	}
	return false
}

// release gives the lease up if identity still holds it.
func (l certLease) release(ctx context.Context) error {
	le, v, err := l.get(ctx)
	if err != nil || le == nil || v.Holder != l.identity {
		return err
	}
	le = le.DeepCopy()
	le.Spec.HolderIdentity = nil
	_, err = l.client.CoordinationV1().Leases(LeaseNamespace).Update(ctx, le, metav1.UpdateOptions{})
	return err
}
