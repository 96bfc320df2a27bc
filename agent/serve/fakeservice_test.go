package serve

import (
	"context"
	"fmt"
	"sync"

	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/context/onegate"
)

// fakeService is OneGate as one VM of a service sees it, in memory,
// counting requests by kind.
type fakeService struct {
	mu    sync.Mutex
	self  int
	state int
	roles []onegate.Role
	vms   map[int]*onegate.VM
	calls map[string]int
}

var _ gate.OneGate = (*fakeService)(nil)

func newFakeService(self int) *fakeService {
	return &fakeService{self: self, state: onegate.ServiceRunning, vms: map[int]*onegate.VM{}, calls: map[string]int{}}
}

// add puts a running VM into a role.
func (f *fakeService) add(role string, id int, ut map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ut == nil {
		ut = map[string]string{}
	}
	f.vms[id] = &onegate.VM{ID: id, State: onegate.StateActive, LCMState: onegate.LCMRunning, UserTemplate: ut}
	for i := range f.roles {
		if f.roles[i].Name == role {
			f.roles[i].Nodes = append(f.roles[i].Nodes, onegate.Node{VMID: id})
			return
		}
	}
	f.roles = append(f.roles, onegate.Role{Name: role, Nodes: []onegate.Node{{VMID: id}}})
}

func (f *fakeService) remove(id int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.vms, id)
	for i := range f.roles {
		var keep []onegate.Node
		for _, n := range f.roles[i].Nodes {
			if n.VMID != id {
				keep = append(keep, n)
			}
		}
		f.roles[i].Nodes = keep
	}
}

func (f *fakeService) set(fn func(f *fakeService)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeService) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

// vmReads counts the GET /vms/:id of one VM.
func (f *fakeService) vmReads(id int) int { return f.count(fmt.Sprintf("GetVMByID:%d", id)) }

func (f *fakeService) ut(id int, key string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if vm := f.vms[id]; vm != nil {
		return vm.UserTemplate[key]
	}
	return ""
}

func (f *fakeService) copyVM(id int) (*onegate.VM, error) {
	vm := f.vms[id]
	if vm == nil {
		return nil, fmt.Errorf("VM %d not found", id)
	}
	c := *vm
	c.UserTemplate = map[string]string{}
	for k, v := range vm.UserTemplate {
		c.UserTemplate[k] = v
	}
	return &c, nil
}

func (f *fakeService) GetVM(context.Context) (*onegate.VM, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["GetVM"]++
	return f.copyVM(f.self)
}

func (f *fakeService) GetVMByID(_ context.Context, id int) (*onegate.VM, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["GetVMByID"]++
	f.calls[fmt.Sprintf("GetVMByID:%d", id)]++
	return f.copyVM(id)
}

func (f *fakeService) GetService(context.Context) (*onegate.Service, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["GetService"]++
	s := &onegate.Service{ID: 1, State: f.state}
	for _, r := range f.roles {
		s.Roles = append(s.Roles, onegate.Role{Name: r.Name, Cardinality: len(r.Nodes), Nodes: append([]onegate.Node(nil), r.Nodes...)})
	}
	return s, nil
}

func (f *fakeService) GetServiceExtended(ctx context.Context) (*onegate.Service, error) {
	panic("serve loops never read the extended service")
}

func (f *fakeService) UpdateVM(_ context.Context, kvs ...onegate.KV) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["UpdateVM"]++
	// As the real client does (onegate.EncodeUpdate): a value OneGate
	// cannot store is refused, and nothing is written.
	for _, kv := range kvs {
		if err := onegate.CheckValue(kv.Key, kv.Value); err != nil {
			return err
		}
	}
	for _, kv := range kvs {
		f.vms[f.self].UserTemplate[kv.Key] = kv.Value
	}
	return nil
}

func (f *fakeService) EraseVMKey(_ context.Context, key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["EraseVMKey"]++
	if _, ok := f.vms[f.self].UserTemplate[key]; !ok {
		return &onegate.Error{Method: "PUT", Path: "/vm", Status: 500, Body: "[VirtualMachineUpdateTemplate] attribute not found"}
	}
	delete(f.vms[f.self].UserTemplate, key)
	return nil
}
