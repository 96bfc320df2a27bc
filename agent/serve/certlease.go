package serve

import (
	"context"
	"fmt"
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

// acquire takes or refreshes the lease for identity. It returns false,
// without error, when another master holds it or won a race for it.
func (l certLease) acquire(ctx context.Context, now time.Time) (bool, error) {
	le, v, err := l.get(ctx)
	if err != nil {
		return false, err
	}
	if !v.free(l.identity, now) {
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
