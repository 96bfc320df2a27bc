package context

import (
	"fmt"
	"strings"
	"time"
)

// Bounds of ONEAPP_K8S_CERT_VALIDITY. kubeadm itself has no floor and only
// warns above a year (cmd/kubeadm/app/apis/kubeadm/validation/
// validation.go ValidateCertValidity, against constants.go
// CertificateValidityPeriod). The floor leaves kubeadm init, the masters'
// joins and a renewal room before the first leaf expires; short lifetimes
// are for tests of renewal (docs/certificates.md). The ceiling is
// kubeadm's default: a longer leaf only postpones a renewal nobody then
// rehearses.
const (
	MinCertValidity = 2 * time.Minute
	MaxCertValidity = 365 * 24 * time.Hour
	// DefaultCertRenewBefore is ONEAPP_K8S_CERT_RENEW_BEFORE's default,
	// 30 days (serve.DefaultCertRenewBefore).
	DefaultCertRenewBefore = 30 * 24 * time.Hour
)

// ParseCertValidity reads a leaf lifetime and checks it against its bounds
// and against the renewal threshold renewBefore (ONEAPP_K8S_CERT_RENEW_BEFORE
// as the context has it; empty or unreadable: the default, as serve reads
// it): a leaf that is due for renewal as soon as it is issued would be
// renewed on every tick.
func ParseCertValidity(s, renewBefore string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration like 8760h or 10m", s)
	}
	if d < MinCertValidity || d > MaxCertValidity {
		return 0, fmt.Errorf("%s is outside %s to %s", d, MinCertValidity, fmtTTL(MaxCertValidity))
	}
	before := DefaultCertRenewBefore
	if b, err := time.ParseDuration(strings.TrimSpace(renewBefore)); err == nil && b > 0 {
		before = b
	}
	if d <= before {
		return 0, fmt.Errorf("%s is not longer than the renewal threshold %s (%s): every certificate would be due as soon as it is issued", d, before, KeyCertRenewBefore)
	}
	return d, nil
}
