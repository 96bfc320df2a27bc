package register

import (
	"context"
	"fmt"
	"net/http"

	"github.com/OpenNebula/one/src/oca/go/src/goca"
	"github.com/OpenNebula/one/src/oca/go/src/goca/parameters"
	vmcontext "github.com/onekube/onekube/context"
)

// VMTemplates is what Create needs of oned's VM template API.
type VMTemplates interface {
	// List returns the caller's own VM templates.
	List(ctx context.Context) ([]Document, error)
	Allocate(ctx context.Context, text string) (int, error)
	// Replace overwrites a template's contents.
	Replace(ctx context.Context, id int, text string) error
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
	return &OnedTemplates{ctrl: goca.NewController(goca.NewClient(conf, hc)), password: password}
}

// List asks for the caller's templates only (one.templatepool.info with
// filter -3), so a namesake of another user is never updated.
func (o *OnedTemplates) List(ctx context.Context) ([]Document, error) {
	pool, err := o.ctrl.Templates().InfoContext(ctx, parameters.PoolWhoMine, -1, -1)
	if err != nil {
		return nil, o.wrap("listing VM templates", err)
	}
	out := make([]Document, 0, len(pool.Templates))
	for _, t := range pool.Templates {
		out = append(out, Document{ID: t.ID, Name: t.Name})
	}
	return out, nil
}

// Allocate creates a VM template (one.template.allocate).
func (o *OnedTemplates) Allocate(ctx context.Context, text string) (int, error) {
	id, err := o.ctrl.Templates().CreateContext(ctx, text)
	if err != nil {
		return 0, o.wrap("creating a VM template", err)
	}
	return id, nil
}

// Replace overwrites VM template id (one.template.update, type 0).
func (o *OnedTemplates) Replace(ctx context.Context, id int, text string) error {
	if err := o.ctrl.Template(id).UpdateContext(ctx, text, parameters.Replace); err != nil {
		return o.wrap(fmt.Sprintf("updating VM template %d", id), err)
	}
	return nil
}

func (o *OnedTemplates) wrap(doing string, err error) error {
	return fmt.Errorf("oned: %s: %s", doing, vmcontext.Redact(err.Error(), o.password))
}
