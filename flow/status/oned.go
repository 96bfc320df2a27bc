package status

import (
	"fmt"
	"strings"

	"github.com/OpenNebula/one/src/oca/go/src/goca/schemas/shared"
	"github.com/OpenNebula/one/src/oca/go/src/goca/schemas/vm"
	vmcontext "github.com/onekube/onekube/context"
)

// FromOned turns oned's VM document into a VM, every text bounded and
// masked (redact). The published token is read only to learn that it
// exists and to mask it.
func FromOned(v *vm.VM) VM {
	out, token := fromOned(v)
	return out.redact(token)
}

// fromOned also returns the token the VM published, so the Fetcher can mask
// every master's token in every VM's text (a worker's error may quote the
// join command). Its text is bounded but not masked yet: the caller masks
// it with every token (redact).
func fromOned(v *vm.VM) (VM, vmcontext.Secret) {
	out := VM{ID: v.ID, Name: bound(v.Name)}
	out.State, out.LCMState = stateNames(v)
	for _, nic := range v.Template.GetNICs() {
		if ip, err := nic.Get(shared.IP); err == nil && ip != "" {
			out.IP = bound(ip)
			break
		}
	}
	ut := &v.UserTemplate.Template
	// Every USER_TEMPLATE value is bounded as it is read, so a VM's
	// megabytes are not held while the other VMs are read.
	get := func(key string) string {
		s, _ := ut.GetStr(key)
		return bound(strings.TrimSpace(s))
	}
	raw, _ := ut.GetStr(vmcontext.KeyPubToken)
	raw = strings.TrimSpace(raw)
	out.TokenPublished = raw != ""
	var token vmcontext.Secret
	if len(raw) <= maxKnownToken { // a longer value is no token to look for
		token = vmcontext.NewSecret(strings.Clone(raw))
	}
	out.Phase = get(vmcontext.KeyPubPhase)
	out.Error = get(vmcontext.KeyPubError)
	out.NodeName = get(vmcontext.KeyPubNodeName)
	out.Ready = strings.EqualFold(get(vmcontext.KeyReady), "YES")
	out.Living = livingFrom(get)
	if m := get(vmcontext.KeyPubMaster); m != "" {
		if p := get(vmcontext.KeyPubPort); p != "" {
			m += ":" + p
		}
		out.Master = m
	}
	out.CP = readControlPlane(get)
	out.Upgrade = readUpgrade(get)
	return out, token
}

// maxKnownToken bounds what is kept of a published token to mask it
// with: a token is 23 bytes.
const maxKnownToken = 64

// stateNames uses goca's names, falling back to the numbers for states a
// newer oned added.
func stateNames(v *vm.VM) (string, string) {
	st, lcm, err := v.StateString()
	if err == nil {
		return st, lcm
	}
	if st == "" {
		st = fmt.Sprintf("STATE_%d", v.StateRaw)
	}
	return st, fmt.Sprintf("LCM_STATE_%d", v.LCMStateRaw)
}
