package register

import (
	"context"
	"net/http"

	"github.com/OpenNebula/one/src/oca/go/src/goca"
	dyn "github.com/OpenNebula/one/src/oca/go/src/goca/dynamic"
	"github.com/OpenNebula/one/src/oca/go/src/goca/parameters"
	onuser "github.com/OpenNebula/one/src/oca/go/src/goca/schemas/user"
	vmcontext "github.com/onekube/onekube/context"
)

// OnedUsers reads and updates the caller's own OpenNebula user.
type OnedUsers struct {
	ctrl     *goca.Controller
	password vmcontext.Secret
}

// NewOnedUsers connects to oned at endpoint, as NewOnedVMs.
func NewOnedUsers(endpoint, user string, password vmcontext.Secret, hc *http.Client) *OnedUsers {
	conf := goca.NewConfig(user, password.Reveal(), endpoint)
	return &OnedUsers{ctrl: goca.NewController(goca.NewClient(conf, onedHTTP(hc, user, password))), password: password}
}

// Self returns the caller (one.user.info -1) and the scalar attributes of
// their user template.
func (o *OnedUsers) Self(ctx context.Context) (Owner, map[string]string, error) {
	var u *onuser.User
	err := onedCall("reading the caller's user", o.password, func() (err error) {
		u, err = o.ctrl.User(-1).InfoContext(ctx, false)
		return err
	})
	if err != nil {
		return Owner{}, nil, err
	}
	attrs := map[string]string{}
	for _, p := range u.Template.Elements {
		if pair, ok := p.(*dyn.Pair); ok {
			attrs[pair.Key()] = pair.Value
		}
	}
	return Owner{ID: u.ID, Name: u.Name}, attrs, nil
}

// MergeTemplate merges text into user id's template (one.user.update,
// type 1); a user may update their own.
func (o *OnedUsers) MergeTemplate(ctx context.Context, id int, text string) error {
	return onedCall("updating the caller's user template", o.password, func() error {
		return o.ctrl.User(id).UpdateContext(ctx, text, parameters.Merge)
	})
}
