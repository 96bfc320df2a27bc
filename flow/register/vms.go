package register

import (
	"context"
	"fmt"
	"net/http"

	"github.com/OpenNebula/one/src/oca/go/src/goca"
	"github.com/OpenNebula/one/src/oca/go/src/goca/schemas/vm"
	vmcontext "github.com/onekube/onekube/context"
)

// OnedVMs reads VMs through oned's XML-RPC API (goca's VM controller).
type OnedVMs struct {
	ctrl     *goca.Controller
	password vmcontext.Secret
}

// NewOnedVMs connects to oned at endpoint; user and password must be
// non-empty, as for NewOnedTemplates.
func NewOnedVMs(endpoint, user string, password vmcontext.Secret, hc *http.Client) *OnedVMs {
	conf := goca.NewConfig(user, password.Reveal(), endpoint)
	return &OnedVMs{ctrl: goca.NewController(goca.NewClient(conf, onedHTTP(hc, user, password))), password: password}
}

// Info returns VM id (one.vm.info, not decrypted: status needs no secret
// attribute in clear).
func (o *OnedVMs) Info(ctx context.Context, id int) (*vm.VM, error) {
	var v *vm.VM
	err := onedCall(fmt.Sprintf("reading VM %d", id), o.password, func() (err error) {
		v, err = o.ctrl.VM(id).InfoContext(ctx, false)
		return err
	})
	return v, err
}
