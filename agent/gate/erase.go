package gate

import (
	"context"
	"fmt"

	"github.com/onekube/onekube/context/onegate"
)

// EraseKeys deletes keys from this VM's USER_TEMPLATE, touching only those
// it holds. An erase of an absent key fails with HTTP 500, and from
// OpenNebula 7.2 every explicit 500 says only "Internal server error"
// (onegate-server.rb, one#7251), so "attribute not found" cannot be told
// from a real fault by its text: asking first avoids the question, and an
// erase that fails anyway (a sibling erased it meanwhile) is judged by
// reading the VM again.
func EraseKeys(ctx context.Context, og OneGate, keys ...string) error {
	vm, err := og.GetVM(ctx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if _, ok := vm.UserTemplate[k]; !ok {
			continue
		}
		if err := og.EraseVMKey(ctx, k); err != nil {
			if !onegate.IsAttributeNotFound(err) && stillHas(ctx, og, k) {
				return fmt.Errorf("erasing %s: %w", k, err)
			}
		}
	}
	return nil
}

// stillHas reports whether this VM still holds key; when OneGate cannot
// tell, it says yes, so the caller keeps its error.
func stillHas(ctx context.Context, og OneGate, key string) bool {
	vm, err := og.GetVM(ctx)
	if err != nil {
		return true
	}
	_, ok := vm.UserTemplate[key]
	return ok
}
