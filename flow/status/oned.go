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
	out.Living = livingFrom(get)
	if m := get(vmcontext.KeyPubMaster); m != "" {
		if p := get(vmcontext.KeyPubPort); p != "" {
			m += ":" + p
		}
		out.Master = m
	}
	out.CP = readControlPlane(get)
	return out.redact(token), token
}

// redact masks, in every text field that came from the VM, the tokens
// masters published (whole, and their secret halves alone), anything
// shaped like a bootstrap token, and in free text (phase, error) any
// 16-character run that could be a secret half (maskTokens).
func (v VM) redact(tokens ...vmcontext.Secret) VM {
	var known []vmcontext.Secret
	for _, t := range tokens {
		known = append(known, tokenSecrets(t)...)
	}
	for _, p := range []*string{&v.Name, &v.NodeName, &v.Master, &v.IP} {
		*p = maskTokens(*p, false, known...)
	}
	for _, p := range []*string{&v.Phase, &v.Error, &v.ReadError, &v.CP.Kind, &v.CP.Endpoint, &v.CP.Etcd, &v.CP.EtcdError, &v.CP.Serve} {
		*p = maskTokens(*p, true, known...)
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
