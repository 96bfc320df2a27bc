package gate

import (
	"context"
	"fmt"
	"path/filepath"

	vmcontext "github.com/onekube/onekube/context"
)

// VMContext is what a program in the VM reads from its context before
// anything else: the OneGate credentials, a private OneGate CA, and the
// variables.
type VMContext struct {
	Creds vmcontext.Credentials
	// OneGateCA is the CA bundle of a OneGate behind a private CA
	// (ONEKUBE_ONEGATE_CA), nil for none.
	OneGateCA []byte
	Vars      vmcontext.Vars
}

// LoadContext reads the VM context with vmcontext.Load. An explicit
// contextFile is a path the operator named, taken as given (not joined to
// root); without it, credential discovery looks under root.
func LoadContext(ctx context.Context, root, contextFile string, getenv func(string) string) (*VMContext, error) {
	opts := vmcontext.LoadOptions{Root: root, Getenv: getenv}
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
	// Needed before OneGate can be reached, so a bad value is an error
	// here (journal and exit status), not a report.
	ca, err := vc.Vars.OneGateCA()
	if err != nil {
		return nil, err
	}
	return &VMContext{Creds: vc.Creds, OneGateCA: ca, Vars: vc.Vars}, nil
}
