// Package register puts a rendered cluster into OpenNebula: the role VM
// templates through oned's XML-RPC API (goca's template controller) and the
// service template through OneFlow's REST API with our own JSON, since
// goca's OneFlow structs drop fields (shared/reference/oneflow.md §4).
package register

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	vmcontext "github.com/onekube/onekube/context"
)

// Defaults of the OpenNebula CLIs.
const (
	DefaultXMLRPC  = "http://localhost:2633/RPC2"
	DefaultOneFlow = "http://localhost:2474"
)

// ErrNoCredentials: neither flags, environment nor ~/.one/one_auth hold a
// user and password.
var ErrNoCredentials = errors.New("no OpenNebula credentials")

// Config holds the endpoints and credentials.
type Config struct {
	XMLRPC   string
	OneFlow  string
	User     string
	Password vmcontext.Secret
	// FlowUser and FlowPassword authenticate to OneFlow when they differ
	// from the oned credentials (ONEFLOW_USER / ONEFLOW_PASSWORD).
	FlowUser     string
	FlowPassword vmcontext.Secret
}

// Env is where LoadConfig looks, so tests need no real home or environment.
type Env struct {
	Getenv   func(string) string
	ReadFile func(string) ([]byte, error)
	Home     string
}

// LoadConfig resolves the settings the way the OpenNebula CLIs do; a
// non-empty field of flags wins over everything else:
//   - oned: ONE_XMLRPC, else http://localhost:2633/RPC2
//   - OneFlow: ONEFLOW_URL, else ~/.one/oneflow_endpoint, else http://localhost:2474
//   - credentials: ONE_AUTH (a file), else ~/.one/one_auth, "user:password"
//   - OneFlow credentials: ONEFLOW_USER/ONEFLOW_PASSWORD, else the above.
func LoadConfig(env Env, flags Config) (Config, error) {
	c := flags
	if c.XMLRPC == "" {
		c.XMLRPC = first(env.Getenv("ONE_XMLRPC"), DefaultXMLRPC)
	}
	if c.OneFlow == "" {
		c.OneFlow = env.Getenv("ONEFLOW_URL")
	}
	if c.OneFlow == "" {
		if b, err := env.ReadFile(filepath.Join(env.Home, ".one", "oneflow_endpoint")); err == nil {
			c.OneFlow = strings.TrimSpace(string(b))
		}
	}
	if c.OneFlow == "" {
		c.OneFlow = DefaultOneFlow
	}
	c.OneFlow = strings.TrimRight(c.OneFlow, "/")
	if c.User == "" || c.Password.IsZero() {
		path := first(env.Getenv("ONE_AUTH"), filepath.Join(env.Home, ".one", "one_auth"))
		b, err := env.ReadFile(path)
		if err != nil {
			return c, fmt.Errorf("%w: pass --user and --password, or set ONE_AUTH or write %s: %v", ErrNoCredentials, path, err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		user, pass, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || user == "" {
			return c, fmt.Errorf("%w: %s must hold user:password on its first line", ErrNoCredentials, path)
		}
		if c.User == "" {
			c.User = user
		}
		if c.Password.IsZero() {
			c.Password = vmcontext.NewSecret(pass)
		}
	}
	if c.FlowUser == "" {
		c.FlowUser = first(env.Getenv("ONEFLOW_USER"), c.User)
	}
	if c.FlowPassword.IsZero() {
		if p := env.Getenv("ONEFLOW_PASSWORD"); p != "" {
			c.FlowPassword = vmcontext.NewSecret(p)
		} else {
			c.FlowPassword = c.Password
		}
	}
	return c, nil
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
