package onegate

import "github.com/onekube/onekube/context/protocol"

// Claim is the USER_TEMPLATE value of key as a protocol.Claim: any VM of
// the service may have written it (docs/trust.md), so a caller gets the
// text only through Claim.Unverified(), with a comment saying why that
// use is safe. A nil VM or a missing key is an empty claim.
func (vm *VM) Claim(key string) protocol.Claim {
	if vm == nil {
		return protocol.Claim{}
	}
	return protocol.ClaimOf(vm.UserTemplate[key])
}
