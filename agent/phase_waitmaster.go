package agent

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/safetext"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// serviceRefresh is how often a waiting worker reads the service again:
// the master may have been replaced (a new VM ID) while it waited.
const serviceRefresh = 5 * time.Minute

// hintPatience is how long a worker waits on the master its context names
// while that master runs, READY, without a token for it: serve mints one
// for a waiting VM within a tokens tick and a publish tick (30 s + 3 s).
// Past it, that master's serve is taken for dead (a guest that hung stays
// RUNNING in oned) and the service is read for the others.
const hintPatience = 40 * time.Second

// waitMaster polls the master role's VMs (GET /vms/:id, lowest ID first)
// until one is READY with valid join data, for at most the master timeout,
// paced by the initializing master's published estimate (pace.go). It
// stops at once when the initializing master published PHASE=failed, and
// re-reads the service every serviceRefresh, or at once when the master
// the context named is not one OneGate shows this VM (discovery confirmed
// that master is in the master role: hint.go). It never reads the
// extended service document, whose size grows with the cluster, and never
// falls back to creating a cluster of its own. The phase is announced only
// when the first look finds no join data: a worker of a straight
// deployment, created after the master's READY, just joins.
func waitMaster(ctx context.Context, d Data) error {
	n, t := d.Node(), d.Settings()
	var eta time.Time
	pace := newPacer(d.SelfID(), t, d.Clock())
	w := &waiter{
		what:    "waiting for the master",
		timeout: t.MasterTimeout,
		expired: fmt.Errorf("%w (master VMs %s)", ErrMasterTimeout, idList(n.MasterIDs)),
		initial: t.PollInterval,
		max:     t.MaxPollInterval,
		clock:   d.Clock(),
		log:     d.Log(),
		next:    func(now time.Time) time.Duration { return pace.next(now, eta) },
	}
	lastRead := d.Clock().Now()
	firstLook := lastRead
	toldStale := false
	judge := &expiryJudge{d: d}
	foreign := map[int]netip.Addr{}
	var look func(ctx context.Context) error
	look = func(ctx context.Context) error {
		if d.Clock().Now().Sub(lastRead) >= serviceRefresh {
			refreshMasters(ctx, d)
			lastRead = d.Clock().Now()
			w.expired = fmt.Errorf("%w (master VMs %s)", ErrMasterTimeout, idList(n.MasterIDs))
		}
		var why []string
		eta = time.Time{}
		hintAlive := false
		for i, id := range n.MasterIDs {
			vm, err := d.OneGate().GetVMByID(ctx, id)
			if errors.Is(err, ErrUnauthorized) {
				return err
			}
			if err != nil {
				why = append(why, fmt.Sprintf("VM %d: %v", id, err))
				continue
			}
			m, reason := readyMaster(vm, d.Config().Port)
			if a, ok := foreignAddress(vm); ok && foreign[id] != a {
				// Said once per value: the retries log at debug only,
				// and a redirect attempt is worth the owner's eye.
				foreign[id] = a
				d.Log().Warn("ignoring the master address a master VM shows: it is not one of that VM's NIC addresses (a sibling VM may have rewritten it)",
					"master_vm", id, vmcontext.KeyPubMaster, a.String(), "nics", addrList(vm.Addrs()))
			}
			if i == 0 {
				eta = publishedETA(vm)
				hintAlive = isReady(vm) && running(vm)
			}
			if reason == "" {
				if reason = judge.token(ctx, vm, m); reason != "" && !toldStale {
					d.Log().Info("waiting for a fresh join token", "master_vm", id, "reason", reason)
					toldStale = true
				}
			}
			if reason == "" {
				*d.Master() = m
				otherMasters(ctx, d, n.MasterIDs[i+1:])
				return nil
			}
			if i == 0 && failed(vm) {
				// Only the initializing master's failure ends the wait;
				// the other master-role VMs fail until HA is supported.
				return fmt.Errorf("%w: VM %d reported %s=%s: %s", ErrMasterFailed, id, vmcontext.KeyPubPhase, PhaseFailed, quoteReport(vm.UserTemplate[vmcontext.KeyPubError]))
			}
			why = append(why, fmt.Sprintf("VM %d: %s", id, reason))
		}
		d.ReportWaiting(ctx)
		if len(why) == 0 {
			why = append(why, "the service lists no master VM")
		}
		if n.MasterHint && (!hintAlive || d.Clock().Now().Sub(firstLook) >= hintPatience) {
			// The master OneFlow named cannot serve this worker: gone
			// (404), not of this service (400), not running (OneFlow
			// names the oldest master even when it is powered off, READY
			// from its boot), or silent past hintPatience. The service
			// lists the others; reading it now costs one document,
			// waiting serviceRefresh minutes. A running, READY master
			// without a token is first given that patience: its serve
			// mints one for a waiting VM within a tick.
			d.Log().Info("the master the context names cannot serve this worker; reading the service for the others", "master_vm", n.MasterIDs[0])
			// Discovery read the service already, and confirmed the
			// hint with it.
			setMasters(d, n.RoleMasters)
			w.expired = fmt.Errorf("%w (master VMs %s)", ErrMasterTimeout, idList(n.MasterIDs))
			if !n.MasterHint {
				// The service answered: look at every master now,
				// not a backoff later.
				return look(ctx)
			}
		}
		return Retryable(errors.New(strings.Join(why, "; ")))
	}
	err := w.run(ctx, look)
	if err != nil {
		return err
	}
	m := d.Master()
	d.Log().Info("master ready", "master_vm", m.VMID, "endpoint", netip.AddrPortFrom(m.Address, uint16(m.Port)).String(), "attempts", w.attempts) //nolint:gosec // validated port
	return nil
}

// otherMasters reads the masters after the one found (HA only: one master
// costs nothing more) and keeps the addresses of those READY in the same
// cluster, as oned lists them on their NICs, for the local balancer: a
// worker must reach the cluster when the first master is down. A failed
// read only leaves that master out; the balancer learns every API server
// from the cluster once joined.
func otherMasters(ctx context.Context, d Data, ids []int) {
	m := d.Master()
	for _, id := range ids {
		vm, err := d.OneGate().GetVMByID(ctx, id)
		if err != nil {
			d.Log().Debug("reading another master for the balancer failed", "vmid", id, "error", err)
			continue
		}
		if publishedHash(vm) != m.Hash {
			continue
		}
		// Kept only when it is one of that VM's own NICs (ownsAddress).
		raw := vm.Claim(vmcontext.KeyPubMaster).Unverified()
		a, err := parsePublishedAddr(raw)
		if err != nil || unusableAddress(a) != "" || !ownsAddress(vm, raw) {
			continue
		}
		m.Others = append(m.Others, a.Unmap())
	}
}

// refreshMasters re-reads the master role's VM IDs; a failed read keeps
// the list it had.
func refreshMasters(ctx context.Context, d Data) {
	ids, err := readMasterIDs(ctx, d, d.Config().MasterRole)
	if err != nil {
		d.Log().Warn("re-reading the service failed; keeping the master list", "error", err)
		return
	}
	setMasters(d, ids)
}

// setMasters makes ids, the master role as the service lists it, the
// masters to look at.
func setMasters(d Data, ids []int) {
	n := d.Node()
	if !slices.Equal(ids, n.MasterIDs) {
		d.Log().Info("the master role changed while waiting", "was", idList(n.MasterIDs), "now", idList(ids))
		n.MasterIDs = ids
	}
	n.MasterHint = false
}

// failed reports whether a VM published PHASE=failed and is not ready.
func failed(vm *onegate.VM) bool {
	// A claim: believed, it can only stop this VM's own wait.
	return strings.TrimSpace(vm.Claim(vmcontext.KeyPubPhase).Unverified()) == PhaseFailed && !isReady(vm)
}

// quoteReport shows another VM's published error, bounded and escaped.
func quoteReport(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "(no " + vmcontext.KeyPubError + ")"
	}
	return safetext.Quote(s, maxErrorValue)
}

// readyMaster checks a master VM's published join data strictly: READY=YES,
// a well-formed token, a 64-hex hash (with or without "sha256:"), an
// optional port, and an address that is one of that VM's own NIC addresses
// as oned reports them through OneGate: any VM of the service may rewrite
// another's USER_TEMPLATE (update_by_id), but not its NICs. On failure it
// says what is missing or malformed, never the token. defaultPort applies
// when the master published none, as the legacy appliance did not.
func readyMaster(vm *onegate.VM, defaultPort int) (Master, string) {
	if !isReady(vm) {
		return Master{}, "not READY yet"
	}
	var missing, bad []string
	// A token is a secret only towards the API server at an address
	// checked below against the VM's NICs, behind the CA pin.
	tok := strings.TrimSpace(vm.Claim(vmcontext.KeyPubToken).Unverified())
	switch {
	case tok == "":
		missing = append(missing, vmcontext.KeyPubToken)
	case !kubeadm.ValidToken(tok):
		bad = append(bad, vmcontext.KeyPubToken)
	}
	pin := vm.Claim(vmcontext.KeyPubHash)
	hash, err := kubeadm.ParseHash(pin.Unverified()) // the CA pin is a claim (docs/trust.md, open)
	switch {
	case pin.Empty():
		missing = append(missing, vmcontext.KeyPubHash)
	case err != nil:
		bad = append(bad, vmcontext.KeyPubHash)
	}
	// Accepted only among the VM's own NICs (the last case below).
	raw := strings.TrimSpace(vm.Claim(vmcontext.KeyPubMaster).Unverified())
	addr, err := parsePublishedAddr(raw)
	switch {
	case raw == "":
		missing = append(missing, vmcontext.KeyPubMaster)
	case err != nil:
		bad = append(bad, fmt.Sprintf("%s (%v)", vmcontext.KeyPubMaster, err))
	case unusableAddress(addr) != "":
		bad = append(bad, fmt.Sprintf("%s (%s is %s)", vmcontext.KeyPubMaster, addr, unusableAddress(addr)))
	case !ownsAddress(vm, raw):
		bad = append(bad, fmt.Sprintf("%s (%s is not an address of VM %d, whose NICs have %s)", vmcontext.KeyPubMaster, addr, vm.ID, addrList(vm.Addrs())))
	}
	port := defaultPort
	// A wrong port can only make the join fail.
	if s := strings.TrimSpace(vm.Claim(vmcontext.KeyPubPort).Unverified()); s != "" {
		p, err := strconv.Atoi(s)
		if err != nil || p < 1 || p > 65535 {
			bad = append(bad, vmcontext.KeyPubPort)
		}
		port = p
	}
	var parts []string
	if len(missing) == 1 && missing[0] == vmcontext.KeyPubToken && len(bad) == 0 {
		// serve erases the token while nobody waits and mints one for VMs
		// that do, so this is the normal state of a scale-up's first look.
		return Master{}, "READY, no join token published yet (the acting master mints one while a VM waits)"
	}
	if len(missing) > 0 {
		parts = append(parts, "READY but missing "+strings.Join(missing, ", "))
	}
	if len(bad) > 0 {
		parts = append(parts, "malformed "+strings.Join(bad, ", "))
	}
	if len(parts) > 0 {
		return Master{}, strings.Join(parts, "; ")
	}
	// The endpoint decides only where to join: a rewritten one can make the
	// join fail (the CA pin holds), never trust another cluster.
	ep := strings.TrimSpace(vm.Claim(vmcontext.KeyPubEndpoint).Unverified())
	return Master{VMID: vm.ID, Address: addr.Unmap(), Port: port, Hash: hash, Token: vmcontext.NewSecret(tok), Endpoint: ep}, ""
}

// foreignAddress returns the master address vm shows when it is a
// well-formed, usable address that is not one of vm's NICs: a rewrite
// pointing workers elsewhere, which readyMaster refuses.
func foreignAddress(vm *onegate.VM) (netip.Addr, bool) {
	raw := strings.TrimSpace(vm.UserTemplate[vmcontext.KeyPubMaster])
	a, err := parsePublishedAddr(raw)
	if raw == "" || err != nil || unusableAddress(a) != "" || ownsAddress(vm, raw) {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// unusableAddress says why no other node could reach a for the API server,
// "" when it is fine.
func unusableAddress(a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsUnspecified():
		return "the unspecified address"
	case a.IsMulticast():
		return "a multicast address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.Zone() != "":
		return "scoped to an interface"
	}
	return ""
}

// ownsAddress reports whether s is one of vm's NIC addresses in OneGate.
func ownsAddress(vm *onegate.VM, s string) bool {
	a, err := parsePublishedAddr(s)
	if err != nil {
		return false
	}
	return slices.Contains(vm.Addrs(), a.Unmap())
}

func addrList(as []netip.Addr) string {
	if len(as) == 0 {
		return "no address"
	}
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

func idList(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ", ")
}

// running reports whether OneGate shows vm ACTIVE/RUNNING.
func running(vm *onegate.VM) bool {
	return vm.State == onegate.StateActive && vm.LCMState == onegate.LCMRunning
}
