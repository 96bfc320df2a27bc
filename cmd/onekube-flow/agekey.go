package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow/access"
	"github.com/onekube/onekube/flow/register"
)

// identity loads the key answers are sealed to: --identity, else the
// default key, generated on first use. With storeKey, the public key goes
// into the caller's OpenNebula user template when that has none, so the
// clusters they instantiate from then on authorize it
// ($USER[ONEKUBE_AGE_RECIPIENT] in the master's CONTEXT).
func (a *app) identity(ctx context.Context, f kubeconfigFlags, conf register.Config, hc *http.Client) (access.Identity, error) {
	var id access.Identity
	var err error
	if f.identity != "" {
		id, err = access.LoadIdentity(f.identity)
	} else {
		id, err = a.defaultIdentity()
	}
	if err != nil {
		return id, err
	}
	if f.storeKey {
		a.storeRecipient(ctx, conf, hc, id.Recipient)
	}
	return id, nil
}

// defaultIdentity loads or creates ~/.config/onekube/age-key.txt.
func (a *app) defaultIdentity() (access.Identity, error) {
	dir, err := a.configDir()
	if err != nil {
		return access.Identity{}, err
	}
	id, created, err := access.LoadOrCreateIdentity(access.DefaultIdentityPath(dir), time.Now())
	if err != nil {
		return id, err
	}
	if created {
		fmt.Fprintf(a.stderr, "created your key %s (mode 0600); its public key is %s\n", id.Path, id.Recipient)
	}
	return id, nil
}

// configDir is $XDG_CONFIG_HOME, else ~/.config (os.UserConfigDir's rule
// on Linux, through the app's environment seam).
func (a *app) configDir() (string, error) {
	if d := a.env.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return d, nil
	}
	if a.env.Home == "" {
		return "", errors.New("no home directory for ~/.config/onekube: pass --identity")
	}
	return filepath.Join(a.env.Home, ".config"), nil
}

// storeRecipient writes the recipient into the caller's user template
// when it holds none; a failure is a warning, never the command's end.
func (a *app) storeRecipient(ctx context.Context, conf register.Config, hc *http.Client, recipient string) {
	users := register.NewOnedUsers(conf.XMLRPC, conf.User, conf.Password, hc)
	me, attrs, err := users.Self(ctx)
	if err != nil {
		fmt.Fprintf(a.stderr, "warning: reading your OpenNebula user to store your public key: %v\n", err)
		return
	}
	if attrs[vmcontext.UserKeyAgeRecipient] != "" {
		return
	}
	text := fmt.Sprintf("%s = \"%s\"\n", vmcontext.UserKeyAgeRecipient, recipient)
	if err := users.MergeTemplate(ctx, me.ID, text); err != nil {
		fmt.Fprintf(a.stderr, "warning: storing your public key in your OpenNebula user: %v\n", err)
		return
	}
	fmt.Fprintf(a.stderr, "stored your public key in OpenNebula user %s (%s): clusters instantiated from now on authorize it\n",
		me.Name, vmcontext.UserKeyAgeRecipient)
}

// kubeconfigKey is create's part: make sure the user has a key and that
// their OpenNebula user names it, before they instantiate. Failures are
// warnings: the templates are registered either way.
func (a *app) kubeconfigKey(ctx context.Context, skip bool, conf register.Config, hc *http.Client) {
	if skip {
		return
	}
	id, err := a.defaultIdentity()
	if err != nil {
		fmt.Fprintf(a.stderr, "warning: kubeconfig key: %v\n", err)
		return
	}
	a.storeRecipient(ctx, conf, hc, id.Recipient)
}
