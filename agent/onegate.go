package agent

import (
	"context"

	"github.com/onekube/onekube/context/onegate"
)

// OneGate is the part of the OneGate client the agent uses. Implementations
// classify their errors: a rejected token wraps ErrUnauthorized, and a
// transient failure is marked with Retryable. NewOneGate adapts the real
// client; tests use an in-memory fake.
type OneGate interface {
	// GetVM returns this VM (GET /vm).
	GetVM(ctx context.Context) (*onegate.VM, error)
	// GetVMByID returns another VM of the service (GET /vms/:id).
	GetVMByID(ctx context.Context, id int) (*onegate.VM, error)
	// GetService returns the short service document (GET /service).
	GetService(ctx context.Context) (*onegate.Service, error)
	// GetServiceExtended returns the service with every node's VM
	// (GET /service?extended=true).
	GetServiceExtended(ctx context.Context) (*onegate.Service, error)
	// UpdateVM merges kvs into this VM's USER_TEMPLATE in one request.
	UpdateVM(ctx context.Context, kvs ...onegate.KV) error
	// EraseVMKey deletes one key of this VM's USER_TEMPLATE.
	EraseVMKey(ctx context.Context, key string) error
}
