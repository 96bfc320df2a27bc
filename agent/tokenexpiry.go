package agent

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
	"github.com/onekube/onekube/context/protocol"
)

// TokenSafetyMargin is how much life a published join token must have
// left for a worker to start a join with it (context/protocol). The life
// left is read on the master's clock (MasterClock), the one the API
// server judges by.
const TokenSafetyMargin = protocol.TokenSafetyMargin

// skewTolerance is how far this VM's clock may differ from a master's
// before the agent says so: NTP keeps clocks within milliseconds, and the
// Date header it is read from has whole seconds.
const skewTolerance = time.Minute

// masterTime is a reading of a master's clock.
type masterTime struct {
	now  time.Time     // the master's time at the read
	skew time.Duration // this VM's clock minus the master's, whole seconds
}

func readMasterClock(ctx context.Context, d Data, api netip.AddrPort, caHash string) (masterTime, error) {
	at, err := d.MasterClock().MasterNow(ctx, api, caHash)
	if err != nil {
		return masterTime{}, err
	}
	return masterTime{now: at, skew: d.Clock().Now().Sub(at).Round(time.Second)}, nil
}

// skewed says how this VM's clock disagrees with the master's, "" within
// skewTolerance.
func (m masterTime) skewed() string {
	switch {
	case m.skew > skewTolerance:
		return fmt.Sprintf("this VM's clock runs %s ahead of the master's", m.skew)
	case m.skew < -skewTolerance:
		return fmt.Sprintf("this VM's clock runs %s behind the master's", -m.skew)
	}
	return ""
}

// publishedExpiry reads ONEGATE_K8S_TOKEN_EXPIRES; ok is false when the
// master published none (bootstrap just before serve took over, or a
// legacy master): then kubeadm's own check is the last word.
func publishedExpiry(vm *onegate.VM) (exp time.Time, ok bool, err error) {
	raw := strings.TrimSpace(vm.UserTemplate[vmcontext.KeyPubTokenExpires])
	if raw == "" {
		return time.Time{}, false, nil
	}
	exp, err = time.Parse(time.RFC3339, raw)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("malformed %s", vmcontext.KeyPubTokenExpires)
	}
	return exp, true, nil
}

// staleToken says why a token expiring at exp must not be used now, read
// on the master's clock; "" when it may.
func staleToken(exp time.Time, m masterTime) string {
	left := exp.Sub(m.now)
	if left >= TokenSafetyMargin {
		return ""
	}
	skew := ""
	if s := m.skewed(); s != "" {
		skew = " (" + s + ")"
	}
	return fmt.Sprintf("its join token expires at %s, %s from now by the master's clock%s, within the %s safety margin; waiting for a fresh one",
		exp.UTC().Format(time.RFC3339), left.Round(time.Second), skew, TokenSafetyMargin)
}

// expiryJudge judges published expiries on the master's clock for one
// wait, saying once when that clock cannot be read or disagrees with
// this VM's.
type expiryJudge struct {
	d                    Data
	toldUnread, toldSkew bool
}

// masterNow reads the clock of the master vm whose API server is api; ok
// is false when it cannot be read: the expiry is then left to kubeadm
// (whose join goes through that same API server) rather than judged on
// this VM's clock.
func (j *expiryJudge) masterNow(ctx context.Context, vm *onegate.VM, api netip.AddrPort, caHash string) (masterTime, bool) {
	m, err := readMasterClock(ctx, j.d, api, caHash)
	if err != nil {
		if !j.toldUnread {
			j.d.Log().Info("cannot read the master's clock; leaving the expiry to kubeadm", "master_vm", vm.ID, "error", err)
			j.toldUnread = true
		}
		return masterTime{}, false
	}
	if s := m.skewed(); s != "" && !j.toldSkew {
		j.d.Log().Warn("clocks disagree: "+s+"; expiries are judged on the master's", "master_vm", vm.ID, "skew", m.skew.String())
		j.toldSkew = true
	}
	return m, true
}

// token says why master m's published token must wait, "" when it may be
// used.
func (j *expiryJudge) token(ctx context.Context, vm *onegate.VM, m Master) string {
	exp, ok, err := publishedExpiry(vm)
	if err != nil {
		return err.Error()
	}
	if !ok {
		return ""
	}
	now, ok := j.masterNow(ctx, vm, netip.AddrPortFrom(m.Address, uint16(m.Port)), m.Hash) //nolint:gosec // validated port
	if !ok {
		return ""
	}
	return staleToken(exp, now)
}

// grant says why a certificate-key grant expiring at exp, published by
// master vm, must not be opened, "" when it may: expired on the granting
// master's clock, which stamped it and whose serve replaces it once
// expired. A grant whose master's clock cannot be read is opened, and its
// token judged by the API server during the join.
func (j *expiryJudge) grant(ctx context.Context, vm *onegate.VM, exp time.Time, caHash string, defaultPort int) string {
	api, ok := publishedAPI(vm, defaultPort)
	if !ok {
		return ""
	}
	now, ok := j.masterNow(ctx, vm, api, caHash)
	if !ok || exp.After(now.now) {
		return ""
	}
	skew := ""
	if s := now.skewed(); s != "" {
		skew = " (" + s + ")"
	}
	return fmt.Sprintf("grant expired %s ago by its clock%s", now.now.Sub(exp).Round(time.Second), skew)
}

// publishedAPI is the API server address a master published.
func publishedAPI(vm *onegate.VM, defaultPort int) (netip.AddrPort, bool) {
	// Only asked for the time (a clock reading), never sent a secret.
	addr, err := netip.ParseAddr(strings.TrimSpace(vm.Claim(vmcontext.KeyPubMaster).Unverified()))
	if err != nil {
		return netip.AddrPort{}, false
	}
	port := defaultPort
	if s := strings.TrimSpace(vm.Claim(vmcontext.KeyPubPort).Unverified()); s != "" { // as above
		if _, err := fmt.Sscanf(s, "%d", &port); err != nil || port < 1 || port > 65535 {
			return netip.AddrPort{}, false
		}
	}
	return netip.AddrPortFrom(addr, uint16(port)), true //nolint:gosec // checked above
}
