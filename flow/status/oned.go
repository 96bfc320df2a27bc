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
	redact := func(s string) string { return vmcontext.Redact(s, token) }
	out.Phase = redact(get(vmcontext.KeyPubPhase))
	out.Error = redact(get(vmcontext.KeyPubError))
	out.NodeName = redact(get(vmcontext.KeyPubNodeName))
	out.Ready = strings.EqualFold(get(vmcontext.KeyReady), "YES")
	if m := get(vmcontext.KeyPubMaster); m != "" {
		if p := get(vmcontext.KeyPubPort); p != "" {
			m += ":" + p
		}
		out.Master = redact(m)
	}
	return out
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
