package status

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/OpenNebula/one/src/oca/go/src/goca/schemas/vm"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow/register"
)

// Flow is what status needs of OneFlow; register.FlowClient implements it.
type Flow interface {
	Services(ctx context.Context) ([]register.Document, error)
	Service(ctx context.Context, id int) ([]byte, error)
}

// VMs is what status needs of oned; register.OnedVMs implements it.
type VMs interface {
	Info(ctx context.Context, id int) (*vm.VM, error)
}

var (
	_ Flow = (*register.FlowClient)(nil)
	_ VMs  = (*register.OnedVMs)(nil)
)

// Sentinels of Resolve.
var (
	ErrNoService        = errors.New("no such service")
	ErrAmbiguousService = errors.New("ambiguous service name")
)

// DefaultParallel bounds the one.vm.info calls in flight: enough to read a
// large cluster quickly without hammering oned.
const DefaultParallel = 8

// Fetcher reads a service and its VMs.
type Fetcher struct {
	Flow Flow
	VMs  VMs
	// Timeout bounds each request; the HTTP client's own timeout applies too.
	Timeout  time.Duration
	Parallel int // DefaultParallel when 0
}

// Resolve turns a service reference into an ID: digits are an ID (as the
// oneflow CLI reads them), anything else a name that must match exactly one
// service.
func (f *Fetcher) Resolve(ctx context.Context, ref string) (int, error) {
	if id, err := strconv.Atoi(ref); err == nil && id >= 0 {
		return id, nil
	}
	if strings.TrimSpace(ref) == "" {
		return 0, fmt.Errorf("%w: empty service name", ErrNoService)
	}
	ctx, cancel := f.timeout(ctx)
	defer cancel()
	docs, err := f.Flow.Services(ctx)
	if err != nil {
		return 0, fmt.Errorf("listing services: %w", err)
	}
	var ids []int
	for _, d := range docs {
		if d.Name == ref {
			ids = append(ids, d.ID)
		}
	}
	switch len(ids) {
	case 0:
		return 0, fmt.Errorf("%w named %q", ErrNoService, ref)
	case 1:
		return ids[0], nil
	}
	sort.Ints(ids)
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return 0, fmt.Errorf("%w: %d services are named %q (IDs %s); pass the ID", ErrAmbiguousService, len(ids), ref, strings.Join(s, ", "))
}

// Fetch reads service id and every VM of it, and summarizes them. A VM that
// cannot be read becomes a row saying why; when none can be read (wrong oned
// credentials, oned unreachable) that is an error, since waiting will not
// mend it.
func (f *Fetcher) Fetch(ctx context.Context, id int) (Report, error) {
	sctx, cancel := f.timeout(ctx)
	b, err := f.Flow.Service(sctx, id)
	cancel()
	if err != nil {
		return Report{}, fmt.Errorf("reading service %d: %w", id, err)
	}
	svc, err := DecodeService(b)
	if err != nil {
		return Report{}, fmt.Errorf("reading service %d: %w", id, err)
	}
	vms := f.readVMs(ctx, svc)
	if err := noneReadable(vms); err != nil {
		return Report{}, fmt.Errorf("reading the VMs of service %d from oned: %w", id, err)
	}
	return Summarize(svc, vms), nil
}

// ErrNoVMReadable: not one VM of the service could be read from oned.
var ErrNoVMReadable = errors.New("no VM could be read")

// noneReadable reports the failure of the lowest VM ID when every read
// failed, or nil.
func noneReadable(vms map[int]VM) error {
	first := -1
	for id, v := range vms {
		if v.ReadError == "" {
			return nil
		}
		if first < 0 || id < first {
			first = id
		}
	}
	if first < 0 {
		return nil // a service with no VMs yet
	}
	return fmt.Errorf("%w: VM %d: %s", ErrNoVMReadable, first, vms[first].ReadError)
}

func (f *Fetcher) readVMs(ctx context.Context, svc Service) map[int]VM {
	var ids []int
	seen := map[int]bool{}
	for _, r := range svc.Roles {
		for _, id := range r.VMIDs {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	n := f.Parallel
	if n <= 0 {
		n = DefaultParallel
	}
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		sem     = make(chan struct{}, n)
		out     = make(map[int]VM, len(ids))
		secrets []vmcontext.Secret
	)
	for _, id := range ids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			v, token := f.readVM(ctx, id)
			mu.Lock()
			out[id] = v
			if !token.IsZero() {
				secrets = append(secrets, token)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	// Every token any master published is masked in every VM's text.
	for id, v := range out {
		out[id] = v.redact(secrets...)
	}
	return out
}

func (f *Fetcher) readVM(ctx context.Context, id int) (VM, vmcontext.Secret) {
	ctx, cancel := f.timeout(ctx)
	defer cancel()
	v, err := f.VMs.Info(ctx, id)
	if err != nil {
		return VM{ID: id, ReadError: err.Error()}, vmcontext.Secret{}
	}
	if v.ID != id {
		return VM{ID: id, ReadError: fmt.Sprintf("oned answered with VM %d", v.ID)}, vmcontext.Secret{}
	}
	return fromOned(v)
}

func (f *Fetcher) timeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if f.Timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, f.Timeout)
}
