package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
)

// ContextSource is the production Deps.LoadSource: it reads the VM context
// with vmcontext.Load and resolves the settings from its variables. An
// explicit contextFile is a path the operator named, taken as given (not
// joined to root); without it, credential discovery looks under root.
func ContextSource(root system.Root, contextFile string, getenv func(string) string) func(context.Context) (*Source, error) {
	return func(ctx context.Context) (*Source, error) {
		opts := vmcontext.LoadOptions{Root: string(root), Getenv: getenv}
		if contextFile != "" {
			abs, err := filepath.Abs(contextFile)
			if err != nil {
				return nil, fmt.Errorf("context file %s: %w", contextFile, err)
			}
			opts.Root, opts.ContextFile = "/", abs
		}
		vc, err := vmcontext.Load(ctx, opts)
		if err != nil {
			return nil, err
		}
		return &Source{
			Creds:   vc.Creds,
			Resolve: func() (Config, error) { return ConfigFromVars(vc.Vars, os.Hostname) },
		}, nil
	}
}

// ConfigFromVars resolves the agent's Config from context variables: the
// validated settings, this VM's address among its NICs, and the node name
// (the hostname, lower-cased as the kubelet does, when the template sets
// none).
func ConfigFromVars(vars vmcontext.Vars, hostname func() (string, error)) (Config, error) {
	s, err := vars.Settings()
	if err != nil {
		return Config{}, err
	}
	addr, err := vmcontext.NodeAddress(s, vars.NICs())
	if err != nil {
		return Config{}, err
	}
	if s.TokenTTL <= 0 {
		// kubeadm reads 0 as "never expires"; a join credential must not
		// sit in OneGate forever.
		return Config{}, fmt.Errorf("%s: %s is not allowed, the bootstrap token needs a lifetime (e.g. 24h)", vmcontext.KeyTokenTTL, s.TokenTTL)
	}
	name := s.NodeName
	if name == "" {
		h, err := hostname()
		if err != nil {
			return Config{}, fmt.Errorf("%s is empty and the hostname is unknown: %w", vmcontext.KeyNodeName, err)
		}
		name = strings.ToLower(strings.TrimSuffix(h, "."))
	}
	return Config{
		MasterRole:      s.MasterRole,
		Address:         addr,
		Port:            s.Port,
		PodsNetwork:     s.PodsNetwork,
		ServicesNetwork: s.ServicesNetwork,
		NodeName:        name,
		Version:         s.Version,
		CNI:             s.CNI,
		TaintedMaster:   s.TaintedMaster,
		TokenTTL:        s.TokenTTL,
	}, nil
}
