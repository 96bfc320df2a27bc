package register

import (
	"context"
	"fmt"

	"github.com/OpenNebula/one/src/oca/go/src/goca/parameters"
)

// Merge merges text (template syntax) into VM id's USER_TEMPLATE
// (one.vm.update, type 1: existing keys replaced, others kept), which
// needs MANAGE on the VM. A merge never races the agent's own OneGate
// writes out of the template, as a replace would.
func (o *OnedVMs) Merge(ctx context.Context, id int, text string) error {
	return onedCall(fmt.Sprintf("updating VM %d", id), o.password, func() error {
		return o.ctrl.VM(id).UpdateContext(ctx, text, parameters.Merge)
	})
}
