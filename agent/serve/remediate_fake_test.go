package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/context/onegate"
)

// fakeFlow is OneGate over a OneFlow service as remediation meets it:
// a VM in POWEROFF, UNKNOWN or a failure puts the service in WARNING; a
// terminated VM is dropped and its role's cardinality lowered (DONE,
// done_wd_cb); a scale is refused unless the service is RUNNING, and is
// followed by COOLDOWN (cooldown, cleared by the test). Siblings' writes
// are the test writing UserTemplate directly.
type fakeFlow struct {
	mu       sync.Mutex
	self     int
	order    []string
	roles    map[string][]int
	vms      map[int]*onegate.VM
	cooldown bool
	refuse   error // refuse the next scale with this
	// refuseAct refuses every VM action with this (oned's "not available
	// for state", a 500).
	refuseAct error
	// warning is OneFlow's sticky WARNING: set when a VM turns POWEROFF,
	// UNKNOWN or *_FAILURE, cleared only by a VM going RUNNING again
	// (running_wd_cb); a broken VM that goes DONE leaves it (onegatesim
	// TestFidelity_TerminatingTheBrokenVMLeavesWarning).
	warning bool
	raw     []string // each action as sent: perform and params
	nextID  int
	actions []string
	scales  []string
}

var (
	_ gate.OneGate = (*fakeFlow)(nil)
	_ VMActor      = (*fakeFlow)(nil)
)

func newFakeFlow(self int) *fakeFlow {
	return &fakeFlow{self: self, roles: map[string][]int{}, vms: map[int]*onegate.VM{}, nextID: 100}
}

func (f *fakeFlow) add(role string, id int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.roles[role]; !ok {
		f.order = append(f.order, role)
	}
	f.roles[role] = append(f.roles[role], id)
	f.vms[id] = &onegate.VM{ID: id, State: onegate.StateActive, LCMState: onegate.LCMRunning, UserTemplate: map[string]string{}}
}

func (f *fakeFlow) with(fn func(f *fakeFlow)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeFlow) state() int {
	if f.warning {
		return onegate.ServiceWarning
	}
	ids := make([]int, 0, len(f.vms))
	for id := range f.vms {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		if t, _ := onegate.Trouble(f.vms[id].State, f.vms[id].LCMState); t != "" {
			f.warning = true // the watchdog saw it
			return onegate.ServiceWarning
		}
	}
	if f.cooldown {
		return onegate.ServiceCooldown
	}
	return onegate.ServiceRunning
}

func (f *fakeFlow) cardinality(role string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.roles[role])
}

func (f *fakeFlow) log() ([]string, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.actions...), append([]string(nil), f.scales...)
}

func (f *fakeFlow) copyVM(id int) (*onegate.VM, error) {
	vm := f.vms[id]
	if vm == nil {
		return nil, &onegate.Error{Method: "GET", Path: fmt.Sprintf("/vms/%d", id), Status: 404}
	}
	c := *vm
	c.UserTemplate = map[string]string{}
	for k, v := range vm.UserTemplate {
		c.UserTemplate[k] = v
	}
	return &c, nil
}

func (f *fakeFlow) GetVM(context.Context) (*onegate.VM, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.copyVM(f.self)
}

func (f *fakeFlow) GetVMByID(_ context.Context, id int) (*onegate.VM, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.copyVM(id)
}

func (f *fakeFlow) GetService(ctx context.Context) (*onegate.Service, error) {
	s, err := f.GetServiceExtended(ctx)
	for i := range s.Roles {
		for j := range s.Roles[i].Nodes {
			s.Roles[i].Nodes[j].VM = nil
		}
	}
	return s, err
}

func (f *fakeFlow) GetServiceExtended(context.Context) (*onegate.Service, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &onegate.Service{ID: 1, State: f.state()}
	for _, name := range f.order {
		r := onegate.Role{Name: name, Cardinality: len(f.roles[name])}
		for _, id := range f.roles[name] {
			vm, _ := f.copyVM(id)
			r.Nodes = append(r.Nodes, onegate.Node{VMID: id, VM: vm})
		}
		s.Roles = append(s.Roles, r)
	}
	return s, nil
}

func (f *fakeFlow) UpdateVM(_ context.Context, kvs ...onegate.KV) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, kv := range kvs {
		f.vms[f.self].UserTemplate[kv.Key] = kv.Value
	}
	return nil
}

func (f *fakeFlow) EraseVMKey(_ context.Context, key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.vms[f.self].UserTemplate[key]; !ok {
		return &onegate.Error{Method: "PUT", Path: "/vm", Status: 500, Body: "[VirtualMachineUpdateTemplate] attribute not found"}
	}
	delete(f.vms[f.self].UserTemplate, key)
	return nil
}

func (f *fakeFlow) Action(_ context.Context, id int, perform string, params map[string]string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.raw = append(f.raw, fmt.Sprintf("%s %v", perform, params))
	// What the real client would send (or refuse to).
	body, err := onegate.ActionBody(perform, params)
	if err != nil {
		return err
	}
	var sent struct {
		Action struct {
			Perform string `json:"perform"`
			Params  any    `json:"params"`
		} `json:"action"`
	}
	if err := json.Unmarshal([]byte(body), &sent); err != nil {
		return err
	}
	entry := fmt.Sprintf("%s %d", sent.Action.Perform, id)
	if sent.Action.Params == true {
		entry += " hard"
	}
	f.actions = append(f.actions, entry)
	vm := f.vms[id]
	if vm == nil {
		return &onegate.Error{Method: "POST", Path: fmt.Sprintf("/vms/%d/action", id), Status: 404}
	}
	if f.refuseAct != nil {
		return f.refuseAct
	}
	f.state() // the watchdog looks before the VM changes
	switch sent.Action.Perform {
	case "poweroff":
		vm.State, vm.LCMState = onegate.StatePoweroff, 0
		f.warning = true
	case "resume":
		vm.State, vm.LCMState = onegate.StateActive, onegate.LCMRunning
		f.warning = false // running_wd_cb
	case "terminate":
		// DONE: OneFlow drops the node and lowers the cardinality.
		delete(f.vms, id)
		for name, ids := range f.roles {
			var keep []int
			for _, x := range ids {
				if x != id {
					keep = append(keep, x)
				}
			}
			f.roles[name] = keep
		}
	default:
		return fmt.Errorf("fake: unknown action %q", perform)
	}
	return nil
}

func (f *fakeFlow) ScaleRole(_ context.Context, role string, cardinality int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scales = append(f.scales, fmt.Sprintf("%s=%d", role, cardinality))
	if err := f.refuse; err != nil {
		f.refuse = nil
		return err
	}
	if st := f.state(); st != onegate.ServiceRunning {
		return &onegate.Error{Method: "PUT", Path: "/service/role/" + role, Status: 400, Body: fmt.Sprintf("Service cannot be scaled in state %d", st)}
	}
	for len(f.roles[role]) < cardinality {
		f.nextID++
		f.roles[role] = append(f.roles[role], f.nextID)
		f.vms[f.nextID] = &onegate.VM{ID: f.nextID, State: onegate.StateActive, LCMState: onegate.LCMRunning, UserTemplate: map[string]string{}}
	}
	f.cooldown = true
	return nil
}
