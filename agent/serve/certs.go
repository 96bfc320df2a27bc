package serve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/safetext"
	"github.com/onekube/onekube/agent/state"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
)

// Defaults of the certs loop.
const (
	// DefaultCertRenewBefore is ONEAPP_K8S_CERT_RENEW_BEFORE's default:
	// kubeadm's leaves last a year (constants.go CertificateValidityPeriod),
	// and 30 days leaves room for a month of failed attempts, each loud.
	DefaultCertRenewBefore = vmcontext.DefaultCertRenewBefore
	// DefaultCertsEvery is the idle tick: reading a few files.
	DefaultCertsEvery = time.Hour
	// certsWaitTick is the tick while another master renews.
	certsWaitTick = 30 * time.Second
	// loudBefore is how long before expiry a failure is logged at error
	// level on every tick (or half the threshold, if that is shorter).
	loudBefore = 7 * 24 * time.Hour
	// aloneBefore is how close to expiry a master renews without the lease
	// when the API server cannot be reached (or a quarter of the
	// threshold, if that is shorter).
	aloneBefore = time.Hour
)

// CertsRenewedFile holds the time of this master's last renewal (RFC 3339),
// for status: the certificates themselves cannot tell a renewal from the
// first issue.
const CertsRenewedFile = state.Dir + "/certs-renewed"

// CertsRestartFile marks certificates renewed but not yet served: it is
// written before the static pods restart and removed once all are back, so
// a restart that failed (or a serve that died) is retried under the lease
// even though the files on disk no longer look due.
const CertsRestartFile = state.Dir + "/certs-restart-pending"

// CertRenewer renews this master's leaf certificates and kubeconfigs.
type CertRenewer interface {
	RenewAll(ctx context.Context) error
}

// KubeadmRenewer renews with `kubeadm certs renew all`.
type KubeadmRenewer struct {
	Kubeadm kubeadm.Runner
	Args    []string // extra flags, for tests
}

// RenewAll implements CertRenewer.
func (k KubeadmRenewer) RenewAll(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	return k.Kubeadm.CertsRenewAll(ctx, k.Args...)
}

// Certs keeps this master's control-plane certificates from expiring, on
// every master: it reads their expiry from disk each tick, and within
// Before of the earliest one it takes the Lease kube-system/
// onekube-cert-renewal, runs `kubeadm certs renew all`, and restarts the
// static pods one at a time, each healthy before the next. It publishes
// the expiry and last renewal (ONEGATE_K8S_CERTS) and, loudly, why it
// could not renew (ONEGATE_K8S_CERTS_ERROR).
type Certs struct {
	Root     system.Root
	Client   kubernetes.Interface
	OneGate  gate.OneGate
	Renewer  CertRenewer
	Pods     *StaticPods
	Clock    system.Clock
	Log      *slog.Logger
	Identity string // this master's name in the lease
	// Before is the renewal threshold (default DefaultCertRenewBefore).
	Before time.Duration
	// Every is the idle tick (default DefaultCertsEvery).
	Every time.Duration
	// LeaseDuration (default DefaultCertLeaseDuration).
	LeaseDuration time.Duration

	shown, errShown keyMirror
	report          CertsReport
}

var (
	_ Loop     = (*Certs)(nil)
	_ Reporter = (*Certs)(nil)
)

// Name implements Loop.
func (c *Certs) Name() string { return "certs" }

// Report implements Reporter.
func (c *Certs) Report() any { return c.report }

// certAction is what a tick does.
type certAction string

const (
	certsIdle        certAction = "idle"
	certsRenew       certAction = "renew"
	certsWait        certAction = "wait"        // another master holds the lease
	certsRenewAlone  certAction = "renew-alone" // no API server, expiry imminent
	certsWaitForAPIs certAction = "wait-api"    // no API server, not yet urgent
)

// decideCerts is the tick's decision. Outside the threshold nothing
// happens. Inside it a master renews only while the lease is free or its
// own, so two masters never restart their static pods at once. Without an
// API server nobody can hold the lease; a master then waits until its
// certificates are about to expire (or have), and renews alone:
// `kubeadm certs renew` needs only the CA on disk, and a master whose
// certificates expire is lost to the cluster anyway, so restarting its
// pods costs nothing that expiry would not.
func decideCerts(now, earliest time.Time, before time.Duration, pending bool, l leaseView, self string) certAction {
	left := earliest.Sub(now)
	if left > before && !pending {
		return certsIdle
	}
	if !l.Reachable {
		if left <= min(aloneBefore, before/4) {
			return certsRenewAlone
		}
		return certsWaitForAPIs
	}
	if l.free(self, now) {
		return certsRenew
	}
	return certsWait
}

// Tick implements Loop.
func (c *Certs) Tick(ctx context.Context) (time.Duration, error) {
	c.defaults()
	if err := c.Pods.Recover(); err != nil {
		return 0, c.fail(ctx, time.Time{}, err)
	}
	leaves, err := ReadLeafCerts(c.Root)
	if err != nil {
		return 0, c.fail(ctx, time.Time{}, err)
	}
	earliest := leaves[0].NotAfter
	c.report.Earliest, c.report.EarliestFile = earliest.UTC(), leaves[0].Path
	c.report.Renewed = c.renewed()
	now := c.Clock.Now()
	lease := certLease{client: c.Client, identity: c.Identity, duration: c.LeaseDuration}
	pending, _ := c.Root.Exists(CertsRestartFile)
	var view leaseView
	if earliest.Sub(now) <= c.Before || pending {
		view = lease.view(ctx)
	}
	act := decideCerts(now, earliest, c.Before, pending, view, c.Identity)
	c.report.State = string(act)
	switch act {
	case certsIdle:
		if err := c.publish(ctx, ""); err != nil {
			return 0, err
		}
		return c.untilDue(earliest, now), nil
	case certsWait:
		c.Log.Info("certificates due; another master renews first", "holder", view.Holder, "expires", earliest.UTC())
		return certsWaitTick, c.publish(ctx, c.errShown.shown)
	case certsWaitForAPIs:
		err := fmt.Errorf("certificates expire at %s (restart pending: %t); the API server cannot be reached for the lease %s, renewing alone within %s of expiry",
			earliest.UTC().Format(time.RFC3339), pending, CertLeaseName, min(aloneBefore, c.Before/4))
		return 0, c.fail(ctx, earliest, err)
	case certsRenew:
		ok, err := lease.acquire(ctx, now, earliest)
		if err != nil {
			return 0, c.fail(ctx, earliest, err)
		}
		if !ok {
			return certsWaitTick, nil
		}
		defer func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if err := lease.release(rctx); err != nil {
				c.Log.Warn("releasing the certificate lease failed; it expires on its own", "error", err)
			}
		}()
	}
	refresh := func(name string) error {
		if act != certsRenew {
			return nil
		}
		// The API may be restarting under us; the lease outlives one pod.
		if _, err := lease.acquire(ctx, c.Clock.Now(), time.Time{}); err != nil {
			c.Log.Warn("refreshing the certificate lease failed", "before", name, "error", err)
		}
		return nil
	}
	if pending && earliest.Sub(now) > c.Before {
		c.Log.Info("certificates renewed earlier; restarting the static pods that still serve the old ones")
		if err := c.restart(ctx, refresh); err != nil {
			return 0, c.fail(ctx, earliest, err)
		}
		return c.untilDue(earliest, c.Clock.Now()), nil
	}
	c.Log.Info("renewing the control-plane certificates", "expires", earliest.UTC(), "file", leaves[0].Path, "alone", act == certsRenewAlone)
	if err := c.renew(ctx, earliest, refresh); err != nil {
		return 0, c.fail(ctx, earliest, err)
	}
	// The next look when the new leaves are due, not an idle hour later:
	// leaves of an hour or less (ONEAPP_K8S_CERT_VALIDITY) would expire
	// before it.
	return c.untilDue(c.report.Earliest, c.Clock.Now()), nil
}

// untilDue is the wait until the earliest leaf is within the threshold,
// at most the idle tick and at least a second.
func (c *Certs) untilDue(earliest, now time.Time) time.Duration {
	return max(time.Second, min(c.Every, earliest.Sub(now)-c.Before))
}

// renew runs kubeadm, checks it renewed, and restarts the static pods.
func (c *Certs) renew(ctx context.Context, earliest time.Time, before func(string) error) error {
	if err := c.Renewer.RenewAll(ctx); err != nil {
		return fmt.Errorf("kubeadm certs renew all: %w", err)
	}
	leaves, err := ReadLeafCerts(c.Root)
	if err != nil {
		return err
	}
	if !leaves[0].NotAfter.After(earliest) {
		return fmt.Errorf("kubeadm certs renew all left %s expiring at %s", leaves[0].Path, leaves[0].NotAfter.UTC().Format(time.RFC3339))
	}
	now := c.Clock.Now()
	if err := c.Root.WriteFile(CertsRestartFile, nil, 0o644); err != nil {
		return fmt.Errorf("recording the pending restart: %w", err)
	}
	if err := c.Root.WriteFile(CertsRenewedFile, []byte(now.UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		c.Log.Warn("recording the renewal failed", "error", err)
	}
	c.report.Earliest, c.report.EarliestFile, c.report.Renewed = leaves[0].NotAfter.UTC(), leaves[0].Path, now.UTC()
	c.Log.Info("certificates renewed; restarting the static pods one at a time", "expires", leaves[0].NotAfter.UTC())
	if err := c.restart(ctx, before); err != nil {
		return err
	}
	// Leaves that are due again as soon as they are issued would be
	// renewed, and the pods restarted, on every tick: say why instead
	// (the error delay spaces the attempts).
	if left := leaves[0].NotAfter.Sub(c.Clock.Now()); left <= c.Before {
		return fmt.Errorf("kubeadm issued certificates that expire at %s, within the renewal threshold %s: they are due again at once; make %s (or --cert-renew-before) shorter than their lifetime (%s, kubeadm's year by default)",
			leaves[0].NotAfter.UTC().Format(time.RFC3339), c.Before, vmcontext.KeyCertRenewBefore, vmcontext.KeyCertValidity)
	}
	return nil
}

// restart restarts the static pods on the renewed certificates and clears
// the pending mark.
func (c *Certs) restart(ctx context.Context, before func(string) error) error {
	if err := c.Pods.RestartAll(ctx, before); err != nil {
		return fmt.Errorf("restarting the static pods after renewal: %w", err)
	}
	if err := c.Root.Remove(CertsRestartFile); err != nil {
		return err
	}
	c.report.State = "renewed"
	c.Log.Info("static pods restarted on renewed certificates")
	return c.publish(ctx, "")
}

// fail records err, publishes it, and logs it at error level once the
// earliest expiry is near: a renewal that keeps failing must be seen long
// before the cluster stops.
func (c *Certs) fail(ctx context.Context, earliest time.Time, err error) error {
	msg := certsErrorText(err)
	c.report.Error = msg
	near := earliest.IsZero() || earliest.Sub(c.Clock.Now()) <= min(loudBefore, c.Before/2)
	if near {
		c.Log.Error("certificates cannot be renewed; the control plane stops when they expire", "expires", earliest.UTC(), "error", err)
	}
	if perr := c.publish(ctx, msg); perr != nil {
		return errors.Join(err, perr)
	}
	return err
}

// publish mirrors the expiry, the last renewal and the error (erased when
// empty) into this VM's USER_TEMPLATE, writing only on a change.
func (c *Certs) publish(ctx context.Context, errText string) error {
	if errText == "" {
		c.report.Error = ""
	}
	if !c.report.Earliest.IsZero() {
		if err := c.shown.set(ctx, c.OneGate, CertsValue(c.report.Earliest, c.report.Renewed)); err != nil {
			return err
		}
	}
	return c.errShown.set(ctx, c.OneGate, errText)
}

// certsErrorText is err as a value OneGate stores as sent
// (onegate.CheckValue refuses quotes, commas, brackets, backslashes and
// line breaks, and kubeadm's errors and a manifest's names carry them):
// line breaks become "; ", the rest is escaped and bounded (safetext),
// and the characters OneGate refuses become their nearest storable ones.
// Found on the test bed: a restart error quoting "probe-port" was never
// published.
func certsErrorText(err error) string { return oneGateText(err.Error()) }

// oneGateText is s as a value OneGate stores as sent: see certsErrorText.
func oneGateText(s string) string {
	s = strings.NewReplacer("\r\n", "; ", "\n", "; ", "\r", "; ").Replace(s)
	s = safetext.Value(s)
	s = strings.NewReplacer(`"`, "'", ",", ";", "[", "(", "]", ")", `\`, "/").Replace(s)
	if s == "" {
		return "-"
	}
	return s
}

// CertsValue is ONEGATE_K8S_CERTS: "expires=<RFC 3339> renewed=<RFC 3339|never>".
func CertsValue(expires, renewed time.Time) string {
	r := "never"
	if !renewed.IsZero() {
		r = renewed.UTC().Format(time.RFC3339)
	}
	return "expires=" + expires.UTC().Format(time.RFC3339) + " renewed=" + r
}

func (c *Certs) renewed() time.Time {
	b, err := c.Root.ReadFile(CertsRenewedFile)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.Log.Warn("reading the last renewal failed", "error", err)
		}
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(b)))
	if err != nil {
		return time.Time{}
	}
	return t
}

func (c *Certs) defaults() {
	if c.Clock == nil {
		c.Clock = system.RealClock{}
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Before <= 0 {
		c.Before = DefaultCertRenewBefore
	}
	if c.Every <= 0 {
		c.Every = DefaultCertsEvery
	}
	if c.LeaseDuration <= 0 {
		c.LeaseDuration = DefaultCertLeaseDuration
	}
	if c.Pods == nil {
		c.Pods = &StaticPods{Root: c.Root, Clock: c.Clock}
	}
	c.shown.key, c.errShown.key = vmcontext.KeyPubCerts, vmcontext.KeyPubCertsError
	c.report.RenewBefore = c.Before.String()
}
