package agent

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/onekube/onekube/agent/kubeadm"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// waitMaster polls the master role's VMs (GET /vms/:id, lowest ID first)
// until one is READY with valid join data, backing off with jitter, for at
// most the master timeout. It never reads the extended service document,
// whose size grows with the cluster, and never falls back to creating a
// cluster of its own.
func waitMaster(ctx context.Context, d Data) error {
	n, t := d.Node(), d.Settings()
	w := &waiter{
		what:    "waiting for the master",
		timeout: t.MasterTimeout,
		expired: fmt.Errorf("%w (master VMs %s)", ErrMasterTimeout, idList(n.MasterIDs)),
		initial: t.PollInterval,
		max:     t.MaxPollInterval,
		clock:   d.Clock(),
		log:     d.Log(),
	}
	err := w.run(ctx, func(ctx context.Context) error {
		var why []string
		for _, id := range n.MasterIDs {
			vm, err := d.OneGate().GetVMByID(ctx, id)
			if errors.Is(err, ErrUnauthorized) {
				return err
			}
			if err != nil {
				why = append(why, fmt.Sprintf("VM %d: %v", id, err))
				continue
			}
			m, reason := readyMaster(vm, d.Config().Port)
			if reason == "" {
				*d.Master() = m
				return nil
			}
			why = append(why, fmt.Sprintf("VM %d: %s", id, reason))
		}
		return Retryable(errors.New(strings.Join(why, "; ")))
	})
	if err != nil {
		return err
	}
	m := d.Master()
	d.Log().Info("master ready", "master_vm", m.VMID, "endpoint", netip.AddrPortFrom(m.Address, uint16(m.Port)).String(), "attempts", w.attempts) //nolint:gosec // validated port
	return nil
}

// readyMaster checks a master VM's published join data strictly: READY=YES,
// a well-formed token, a 64-hex hash (with or without "sha256:"), an IP and
// an optional port. On failure it says what is missing or malformed, never
// the values. defaultPort applies when the master published none, as the
// legacy appliance did not.
func readyMaster(vm *onegate.VM, defaultPort int) (Master, string) {
	ut := vm.UserTemplate
	if !strings.EqualFold(strings.TrimSpace(ut[vmcontext.KeyReady]), "YES") {
		return Master{}, "not READY yet"
	}
	var missing, bad []string
	tok := strings.TrimSpace(ut[vmcontext.KeyPubToken])
	switch {
	case tok == "":
		missing = append(missing, vmcontext.KeyPubToken)
	case !kubeadm.ValidToken(tok):
		bad = append(bad, vmcontext.KeyPubToken)
	}
	hash, err := kubeadm.ParseHash(ut[vmcontext.KeyPubHash])
	switch {
	case strings.TrimSpace(ut[vmcontext.KeyPubHash]) == "":
		missing = append(missing, vmcontext.KeyPubHash)
	case err != nil:
		bad = append(bad, vmcontext.KeyPubHash)
	}
	addr, err := netip.ParseAddr(strings.TrimSpace(ut[vmcontext.KeyPubMaster]))
	switch {
	case strings.TrimSpace(ut[vmcontext.KeyPubMaster]) == "":
		missing = append(missing, vmcontext.KeyPubMaster)
	case err != nil || addr.Zone() != "" || addr.IsUnspecified() || addr.IsMulticast():
		bad = append(bad, vmcontext.KeyPubMaster)
	}
	port := defaultPort
	if s := strings.TrimSpace(ut[vmcontext.KeyPubPort]); s != "" {
		p, err := strconv.Atoi(s)
		if err != nil || p < 1 || p > 65535 {
			bad = append(bad, vmcontext.KeyPubPort)
		}
		port = p
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "READY but missing "+strings.Join(missing, ", "))
	}
	if len(bad) > 0 {
		parts = append(parts, "malformed "+strings.Join(bad, ", "))
	}
	if len(parts) > 0 {
		return Master{}, strings.Join(parts, "; ")
	}
	return Master{VMID: vm.ID, Address: addr.Unmap(), Port: port, Hash: hash, Token: vmcontext.NewSecret(tok)}, ""
}

func idList(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ", ")
}
