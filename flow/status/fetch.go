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

// DefaultDeadline bounds one read of a service and all its VMs: at
// DefaultParallel reads of ~10-50 ms each, thousands of VMs.
const DefaultDeadline = 2 * time.Minute

// Fetcher reads a service and its VMs.
type Fetcher struct {
	Flow Flow
	VMs  VMs
	// Timeout bounds each request; the HTTP client's own timeout applies too.
	Timeout time.Duration
	// Deadline bounds each Fetch, so each round of Wait (none when 0).
	// When it passes, the VMs not read yet are rows saying so.
	Deadline time.Duration
	Parallel int // DefaultParallel when 0
}

// NotReadDeadline is the read error of a VM the deadline left unread.
const NotReadDeadline = "not read: the deadline passed"

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
// mend it. When ctx ends or f.Deadline passes while VMs are read, no more
// reads start and the report has what was read, the rest rows saying
// NotReadDeadline and counted in NotRead; it is not an error.
func (f *Fetcher) Fetch(ctx context.Context, id int) (Report, error) {
	if f.Deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.Deadline)
		defer cancel()
	}
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
	svc = svc.redact()
	vms, notRead := f.readVMs(ctx, svc)
	if notRead < len(vms) {
		if err := noneReadable(vms); err != nil {
			return Report{}, fmt.Errorf("reading the VMs of service %d from oned: %w", id, err)
		}
	}
	return Summarize(svc, vms), nil
}

// ErrNoVMReadable: not one VM of the service could be read from oned.
var ErrNoVMReadable = errors.New("no VM could be read")

// noneReadable reports the failure of the lowest VM ID when every read
// failed, or nil. A VM the deadline left unread failed nothing; only when
// every VM is such is the view not an error (Fetch).
func noneReadable(vms map[int]VM) error {
	first := -1
	for id, v := range vms {
		if v.ReadError == "" {
			return nil
		}
		if v.ReadError != NotReadDeadline && (first < 0 || id < first) {
			first = id
		}
	}
	if first < 0 {
		return nil // a service with no VMs yet
	}
	return fmt.Errorf("%w: VM %d: %s", ErrNoVMReadable, first, vms[first].ReadError)
}

// readVMs reads every VM of svc, at most f.Parallel at once, until ctx
// ends; it returns them, masked, and how many ctx left unread.
func (f *Fetcher) readVMs(ctx context.Context, svc Service) (map[int]VM, int) {
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
launch:
	for _, id := range ids {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			break launch
		}
		if ctx.Err() != nil { // both were ready; do not start another read
			<-sem
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			v, token, err := f.readVM(ctx, id)
			if err != nil && ctx.Err() != nil {
				return // cut by the deadline, not oned's answer: counted below
			}
			mu.Lock()
			out[id] = v
			if !token.IsZero() {
				secrets = append(secrets, token)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	notRead := 0
	for _, id := range ids {
		if _, ok := out[id]; !ok {
			out[id] = VM{ID: id, ReadError: NotReadDeadline}
			notRead++
		}
	}
	// Every token any master published is masked in every VM's text.
	for id, v := range out {
		out[id] = v.redact(secrets...)
	}
	return out, notRead
}

// readVM reads one VM; err is oned's failure, also told in the VM's
// ReadError.
func (f *Fetcher) readVM(ctx context.Context, id int) (VM, vmcontext.Secret, error) {
	ctx, cancel := f.timeout(ctx)
	defer cancel()
	v, err := f.VMs.Info(ctx, id)
	if err != nil {
		return VM{ID: id, ReadError: err.Error()}, vmcontext.Secret{}, err
	}
	if v.ID != id {
		return VM{ID: id, ReadError: fmt.Sprintf("oned answered with VM %d", v.ID)}, vmcontext.Secret{}, nil
	}
	vm, token := fromOned(v)
	return vm, token, nil
}

func (f *Fetcher) timeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if f.Timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, f.Timeout)
}
