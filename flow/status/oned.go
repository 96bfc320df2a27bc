package status

import (
	"fmt"
	"strings"

	"github.com/OpenNebula/one/src/oca/go/src/goca/schemas/shared"
	"github.com/OpenNebula/one/src/oca/go/src/goca/schemas/vm"
	vmcontext "github.com/onekube/onekube/context"
)

// FromOned turns oned's VM document into a VM. The published token is read
// only to learn that it exists and to mask it should the agent's error text
// ever contain it.
func FromOned(v *vm.VM) VM {
	out, _ := fromOned(v)
	return out
}

// fromOned also returns the token the VM published, so the Fetcher can mask
// a master's token in every VM's text (a worker's error may quote the join
// command).
func fromOned(v *vm.VM) (VM, vmcontext.Secret) {
	out := VM{ID: v.ID, Name: v.Name}
	out.State, out.LCMState = stateNames(v)
	for _, nic := range v.Template.GetNICs() {
		if ip, err := nic.Get(shared.IP); err == nil && ip != "" {
			out.IP = ip
			break
		}
	}
	ut := &v.UserTemplate.Template
	get := func(key string) string {
		s, _ := ut.GetStr(key)
		return strings.TrimSpace(s)
	}
	token := vmcontext.NewSecret(get(vmcontext.KeyPubToken))
	out.TokenPublished = !token.IsZero()
	out.Phase = get(vmcontext.KeyPubPhase)
	out.Error = get(vmcontext.KeyPubError)
	out.NodeName = get(vmcontext.KeyPubNodeName)
	out.Ready = strings.EqualFold(get(vmcontext.KeyReady), "YES")
	if m := get(vmcontext.KeyPubMaster); m != "" {
		if p := get(vmcontext.KeyPubPort); p != "" {
			m += ":" + p
		}
		out.Master = m
	}
	return out.redact(token), token
}

// redact masks the secrets in every text field that came from the VM.
func (v VM) redact(secrets ...vmcontext.Secret) VM {
	for _, p := range []*string{&v.Name, &v.Phase, &v.Error, &v.NodeName, &v.Master, &v.IP, &v.ReadError} {
		*p = vmcontext.Redact(*p, secrets...)
	}
	return v
}

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
