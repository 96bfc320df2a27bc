package gate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/onekube/onekube/context/onegate"
)

// requestTimeout bounds one OneGate request; waits retry around it.
const requestTimeout = 20 * time.Second

// NewClient is the production client: onegate's, with its errors
// classified for the programs' waits.
func NewClient(c Config) (OneGate, error) {
	cl, err := onegate.New(onegate.Config{Endpoint: c.Creds.Endpoint, VMID: c.Creds.VMID, Token: c.Creds.Token,
		Timeout: requestTimeout, CAFile: c.CAFile, CAPEM: c.CAPEM, HTTPClient: c.HTTPClient})
	if err != nil {
		return nil, err
	}
	return classified{cl}, nil
}

// classified maps onegate's errors onto the agent's: a 401 wraps
// ErrUnauthorized, a transient failure is marked Retryable.
type classified struct{ c *onegate.Client }

var _ OneGate = classified{}

func classify(err error) error {
	switch {
	case err == nil:
		return nil
	case onegate.IsUnauthorized(err):
		return fmt.Errorf("%w: %w", ErrUnauthorized, err)
	case onegate.IsRetryable(err) && !errors.Is(err, context.Canceled):
		return Retryable(err)
	}
	return err
}

func (c classified) GetVM(ctx context.Context) (*onegate.VM, error) {
	vm, err := c.c.GetVM(ctx)
	return vm, classify(err)
}

func (c classified) GetVMByID(ctx context.Context, id int) (*onegate.VM, error) {
	vm, err := c.c.GetVMByID(ctx, id)
	return vm, classify(err)
}

func (c classified) GetService(ctx context.Context) (*onegate.Service, error) {
	s, err := c.c.GetService(ctx)
	return s, classify(err)
}

func (c classified) GetServiceExtended(ctx context.Context) (*onegate.Service, error) {
	s, err := c.c.GetServiceExtended(ctx)
	return s, classify(err)
}

func (c classified) UpdateVM(ctx context.Context, kvs ...onegate.KV) error {
	return classify(c.c.UpdateVM(ctx, kvs...))
}

func (c classified) EraseVMKey(ctx context.Context, key string) error {
	return classify(c.c.EraseVMKey(ctx, key))
}

// ProbeExposure lets the bootstrap probe what OneGate lets through.
func (c classified) ProbeExposure(ctx context.Context, roleName string) (onegate.Exposure, error) {
	e, err := c.c.ProbeExposure(ctx, roleName)
	return e, classify(err)
}
