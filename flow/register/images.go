package register

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/OpenNebula/one/src/oca/go/src/goca"
	vmcontext "github.com/onekube/onekube/context"
)

// OnedImages reads images through oned's XML-RPC API (goca).
type OnedImages struct {
	ctrl     *goca.Controller
	password vmcontext.Secret
}

// NewOnedImages connects to oned at endpoint, as NewOnedVMs does.
func NewOnedImages(endpoint, user string, password vmcontext.Secret, hc *http.Client) *OnedImages {
	conf := goca.NewConfig(user, password.Reveal(), endpoint)
	return &OnedImages{ctrl: goca.NewController(goca.NewClient(conf, onedHTTP(hc, user, password))), password: password}
}

// ImageFacts is what an upgrade needs to know of a bundle image.
type ImageFacts struct {
	Name       string
	Persistent bool
	// State is oned's image state name (READY, USED, DISABLED, LOCKED,
	// ERROR, ...; goca's image.State), or the number when goca does not
	// know it.
	State string
	// Attrs are the template attributes asked for, "" when absent.
	Attrs map[string]string
}

// Facts reads image id (one.image.info) and the template attributes keys.
func (o *OnedImages) Facts(ctx context.Context, id int, keys ...string) (ImageFacts, error) {
	var f ImageFacts
	err := onedCall(fmt.Sprintf("reading image %d", id), o.password, func() error {
		img, err := o.ctrl.Image(id).InfoContext(ctx, false)
		if err != nil {
			return err
		}
		f.Name = img.Name
		f.Persistent = img.Persistent != nil && *img.Persistent == 1
		if f.State, err = img.StateString(); err != nil {
			f.State = strconv.Itoa(img.StateRaw)
		}
		f.Attrs = map[string]string{}
		for _, k := range keys {
			v, _ := img.Template.GetStr(k)
			f.Attrs[k] = strings.TrimSpace(v)
		}
		return nil
	})
	return f, err
}
