package gate

import (
	"context"
	"net/http"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// OneGate is the part of the OneGate client the programs use.
// Implementations classify their errors: a rejected token wraps
// ErrUnauthorized, and a transient failure is marked with Retryable.
// NewClient adapts the real client; tests use in-memory fakes.
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

// Config is what connecting to OneGate takes.
type Config struct {
	Creds vmcontext.Credentials
	// CAFile and CAPEM add CAs for an https endpoint (--onegate-ca-file,
	// ONEKUBE_ONEGATE_CA).
	CAFile string
	CAPEM  []byte
	// HTTPClient replaces the client's own (tests measuring traffic).
	HTTPClient *http.Client
}
