package main

import (
	"net/http"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow/register"
	"github.com/spf13/pflag"
)

// connFlags are the endpoint and credential flags of the commands that talk
// to OpenNebula (create, status).
type connFlags struct {
	flags    register.Config
	password string
	timeout  time.Duration
}

func (c *connFlags) register(fs *pflag.FlagSet) {
	c.registerEndpoints(fs)
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "timeout of each request")
}

// registerEndpoints registers the flags without --timeout, for a command
// whose --timeout means something else (kubeconfig); each request then
// has the default bound.
func (c *connFlags) registerEndpoints(fs *pflag.FlagSet) {
	c.timeout = 30 * time.Second
	fs.StringVar(&c.flags.XMLRPC, "one-xmlrpc", "", "oned XML-RPC endpoint (default $ONE_XMLRPC or "+register.DefaultXMLRPC+")")
	fs.StringVar(&c.flags.OneFlow, "oneflow-url", "", "OneFlow endpoint (default $ONEFLOW_URL or "+register.DefaultOneFlow+")")
	fs.StringVar(&c.flags.User, "user", "", "OpenNebula user (default from $ONE_AUTH or ~/.one/one_auth)")
	fs.StringVar(&c.password, "password", "", "OpenNebula password (prefer ONE_AUTH: flags show in ps)")
}

// load resolves the flags, environment and ~/.one files into a Config and
// an HTTP client with the request timeout.
func (c *connFlags) load(a *app) (register.Config, *http.Client, error) {
	if c.timeout <= 0 {
		return register.Config{}, nil, usagef("--timeout %s: want a positive duration", c.timeout)
	}
	flags := c.flags
	if c.password != "" {
		flags.Password = vmcontext.NewSecret(c.password)
	}
	conf, err := register.LoadConfig(a.env, flags)
	if err != nil {
		return conf, nil, err
	}
	return conf, &http.Client{Timeout: c.timeout}, nil
}
