package register

import (
	"context"
	"fmt"
	"net/http"

	"github.com/OpenNebula/one/src/oca/go/src/goca"
	"github.com/OpenNebula/one/src/oca/go/src/goca/parameters"
	"github.com/OpenNebula/one/src/oca/go/src/goca/schemas/vmgroup"
	vmcontext "github.com/onekube/onekube/context"
)

// VMGroup is a VM group as Create needs it: its owner and its roles'
// policies by role name.
type VMGroup struct {
	Document
	Policies map[string]string
}

// VMGroups is what Create needs of oned's VM group API.
type VMGroups interface {
	// List returns the caller's own VM groups.
	List(ctx context.Context) ([]VMGroup, error)
	Allocate(ctx context.Context, text string) (int, error)
	Delete(ctx context.Context, id int) error
}

// OnedVMGroups is VMGroups over goca's XML-RPC client.
type OnedVMGroups struct {
	ctrl     *goca.Controller
	password vmcontext.Secret
}

var _ VMGroups = (*OnedVMGroups)(nil)

// NewOnedVMGroups connects to oned at endpoint, as NewOnedTemplates does.
func NewOnedVMGroups(endpoint, user string, password vmcontext.Secret, hc *http.Client) *OnedVMGroups {
	conf := goca.NewConfig(user, password.Reveal(), endpoint)
	return &OnedVMGroups{ctrl: goca.NewController(goca.NewClient(conf, onedHTTP(hc, user, password))), password: password}
}

// List asks for the caller's VM groups only (one.vmgrouppool.info, filter
// -3): a VM's VMGROUP_NAME resolves among its owner's groups
// (VMGroupPool::get_from_attribute), so those are the ones that matter.
func (o *OnedVMGroups) List(ctx context.Context) ([]VMGroup, error) {
	var pool *vmgroup.Pool
	err := onedCall("listing VM groups", o.password, func() (err error) {
		pool, err = o.ctrl.VMGroups().InfoContext(ctx, parameters.PoolWhoMine, -1, -1)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]VMGroup, 0, len(pool.VMGroups))
	for _, g := range pool.VMGroups {
		vg := VMGroup{Document: Document{ID: g.ID, Name: g.Name, UID: g.UID, UName: g.UName}, Policies: map[string]string{}}
		for _, r := range g.Roles {
			vg.Policies[r.Name] = r.Policy
		}
		out = append(out, vg)
	}
	return out, nil
}

// Allocate creates a VM group (one.vmgroup.allocate).
func (o *OnedVMGroups) Allocate(ctx context.Context, text string) (int, error) {
	var id int
	err := onedCall("creating a VM group", o.password, func() (err error) {
		id, err = o.ctrl.VMGroups().CreateContext(ctx, text)
		return err
	})
	return id, err
}

// Delete removes a VM group (one.vmgroup.delete); oned refuses while VMs
// are in it.
func (o *OnedVMGroups) Delete(ctx context.Context, id int) error {
	return onedCall(fmt.Sprintf("deleting VM group %d", id), o.password, func() error {
		return o.ctrl.VMGroup(id).DeleteContext(ctx)
	})
}
