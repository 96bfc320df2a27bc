package register

import (
	"context"
	"fmt"
	"net/http"

	"github.com/OpenNebula/one/src/oca/go/src/goca"
	"github.com/OpenNebula/one/src/oca/go/src/goca/parameters"
	"github.com/OpenNebula/one/src/oca/go/src/goca/schemas/template"
	onuser "github.com/OpenNebula/one/src/oca/go/src/goca/schemas/user"
	vmcontext "github.com/onekube/onekube/context"
)

// VMTemplates is what Create needs of oned's VM template API.
type VMTemplates interface {
	// Whoami returns the user the credentials authenticate.
	Whoami(ctx context.Context) (Owner, error)
	// List returns the caller's own VM templates.
	List(ctx context.Context) ([]Document, error)
	Allocate(ctx context.Context, text string) (int, error)
	// Replace overwrites a template's contents.
	Replace(ctx context.Context, id int, text string) error
	// Delete removes a template (Create's rollback).
	Delete(ctx context.Context, id int) error
}

// OnedTemplates is VMTemplates over goca's XML-RPC client.
type OnedTemplates struct {
	ctrl     *goca.Controller
	password vmcontext.Secret
}

var _ VMTemplates = (*OnedTemplates)(nil)

// NewOnedTemplates connects to oned at endpoint. user and password must be
// non-empty: goca would otherwise read ONE_AUTH itself and exit on error.
func NewOnedTemplates(endpoint, user string, password vmcontext.Secret, hc *http.Client) *OnedTemplates {
	conf := goca.NewConfig(user, password.Reveal(), endpoint)
	return &OnedTemplates{ctrl: goca.NewController(goca.NewClient(conf, onedHTTP(hc, user, password))), password: password}
}

// List asks for the caller's templates only (one.templatepool.info with
// filter -3), so a namesake of another user is never updated.
func (o *OnedTemplates) List(ctx context.Context) ([]Document, error) {
	var pool *template.Pool
	err := onedCall("listing VM templates", o.password, func() (err error) {
		pool, err = o.ctrl.Templates().InfoContext(ctx, parameters.PoolWhoMine, -1, -1)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]Document, 0, len(pool.Templates))
	for _, t := range pool.Templates {
		out = append(out, Document{ID: t.ID, Name: t.Name, UID: t.UID, UName: t.UName})
	}
	return out, nil
}

// Whoami asks oned who the credentials are (one.user.info with ID -1,
// which oned resolves to the caller: SharedAPI::info, 7.4.0;
// RequestManagerInfo, 6.10.5).
func (o *OnedTemplates) Whoami(ctx context.Context) (Owner, error) {
	var u *onuser.User
	err := onedCall("reading the caller's user", o.password, func() (err error) {
		u, err = o.ctrl.User(-1).InfoContext(ctx, false)
		return err
	})
	if err != nil {
		return Owner{}, err
	}
	return Owner{ID: u.ID, Name: u.Name}, nil
}

// Allocate creates a VM template (one.template.allocate).
func (o *OnedTemplates) Allocate(ctx context.Context, text string) (int, error) {
	var id int
	err := onedCall("creating a VM template", o.password, func() (err error) {
		id, err = o.ctrl.Templates().CreateContext(ctx, text)
		return err
	})
	return id, err
}

// Replace overwrites VM template id (one.template.update, type 0).
func (o *OnedTemplates) Replace(ctx context.Context, id int, text string) error {
	return onedCall(fmt.Sprintf("updating VM template %d", id), o.password, func() error {
		return o.ctrl.Template(id).UpdateContext(ctx, text, parameters.Replace)
	})
}

// Delete removes VM template id (one.template.delete).
func (o *OnedTemplates) Delete(ctx context.Context, id int) error {
	return onedCall(fmt.Sprintf("deleting VM template %d", id), o.password, func() error {
		return o.ctrl.Template(id).DeleteContext(ctx)
	})
}
