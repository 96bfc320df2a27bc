package onegatesim

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	vmcontext "github.com/onekube/onekube/context"
)

type vm struct {
	id      int
	name    string
	svc     *service
	role    *role
	token   string
	wrong   bool // SetWrongToken: the server expects another token
	nic     nicLease
	netName string
	netID   string
	stime   time.Time
	user    []attr // USER_TEMPLATE
	system  []attr // TEMPLATE attributes other than CONTEXT and NIC
	context map[string]string
	dir     string
	file    string
	// readyEvent: an update whose text, stripped of quotes and spaces,
	// contained READY=YES (OneFlow's one.vm.update subscription).
	readyEvent bool
	readySeen  bool // the vm-ready event was recorded
	// state and lcm are STATE and LCM_STATE (vmstate.go); the zero
	// values read as ACTIVE and RUNNING.
	state, lcm int
	// done: DONE, gone from s.vms; its role lists it until OneFlow drops
	// it. scaledown: a scale-down is terminating it.
	done, scaledown bool
	// disks are the hot-plugged disks (disks.go).
	disks []Disk
}

// VMInfo describes a simulated VM to tests.
type VMInfo struct {
	ID          int
	Name        string
	Role        string
	ServiceID   int
	IP          netip.Addr
	MAC         string
	ContextDir  string // holds context.sh and token.txt
	ContextFile string // the context.sh path, for onekube-agent --context
	Token       vmcontext.Secret
}

func (v *vm) info() VMInfo {
	return VMInfo{
		ID: v.id, Name: v.name, Role: v.role.spec.name, ServiceID: v.svc.id,
		IP: v.nic.ip, MAC: v.nic.mac, ContextDir: v.dir, ContextFile: v.file,
		Token: vmcontext.NewSecret(v.token),
	}
}

// systemAttrs are VM template attributes oned keeps in TEMPLATE; anything
// else a role adds lands in the USER_TEMPLATE that OneGate shows.
var systemAttrs = map[string]bool{
	"CPU": true, "VCPU": true, "MEMORY": true, "DISK": true, "NIC": true, "NIC_ALIAS": true,
	"NIC_DEFAULT": true, "CONTEXT": true, "GRAPHICS": true, "OS": true, "FEATURES": true,
	"INPUT": true, "RAW": true, "CPU_MODEL": true, "PCI": true, "VMGROUP": true,
	"TOPOLOGY": true, "NUMA_NODE": true, "SPICE_OPTIONS": true, "VIDEO": true, "APPEND": true,
}

// createVM instantiates one VM of the role: the extra template OneFlow
// sends (${role.xpath} evaluated, then parsed by oned), the variables oned
// resolves, and the context files. Callers hold s.mu.
func (s *Sim) createVM(svc *service, r *role) (*vm, error) {
	root, err := s.dir()
	if err != nil {
		return nil, err
	}
	v := &vm{
		id: s.nextVMID, svc: svc, role: r,
		netName: s.o.NetworkName, netID: "0", stime: s.o.Clock(),
	}
	v.name = fmt.Sprintf("%s_%d_(service_%d)", r.spec.name, r.lastNumber, svc.id)
	// oned refuses the VM before it leases anything.
	if err := s.buildTemplate(v); err != nil {
		return nil, err
	}
	if v.nic, err = s.lease(); err != nil {
		return nil, err
	}
	if v.token, err = newToken(); err != nil {
		delete(s.usedIPs, v.nic.ip)
		return nil, err
	}
	s.finishContext(v)
	v.dir = filepath.Join(root, "vm-"+strconv.Itoa(v.id))
	tok := ""
	if strings.EqualFold(v.context["TOKEN"], "YES") {
		tok = v.token
	}
	if v.file, err = writeContextDir(v.dir, v.context, tok); err != nil {
		delete(s.usedIPs, v.nic.ip)
		return nil, err
	}
	s.nextVMID++
	r.lastNumber++
	s.vms[v.id] = v
	s.record(EventVMCreated, svc.id, v.id, r.spec.name, fmt.Sprintf("name=%s ip=%s", v.name, v.nic.ip))
	return v, nil
}

// buildTemplate turns the role's extra template into the VM's USER_TEMPLATE,
// TEMPLATE and CONTEXT. 7.x deep-merges CONTEXT into the template's (unless
// it is not a hash); 6.x's shallow merge replaces it unless APPEND names it.
// An extra template oned cannot parse, or a NIC without a network, fails the
// instantiation. Callers hold s.mu.
func (s *Sim) buildTemplate(v *vm) error {
	rs := v.role.spec
	attrs, err := parseTemplate(s.resolveParentRefs(v, rs.text))
	if err != nil {
		return fmt.Errorf("[one.template.instantiate] %w", err)
	}
	base, strict := s.o.TemplateContexts[rs.templateID]
	if !strict {
		base = s.o.BaseContext
	}
	ctx := map[string]string{}
	for k, val := range base {
		ctx[strings.ToUpper(k)] = val
	}
	replaceContext := rs.replaceContext || (rs.legacy && !appendsContext(attrs))
	firstNIC := true
	for _, a := range attrs {
		switch {
		case a.name == "CONTEXT" && a.isVector():
			if replaceContext {
				ctx = map[string]string{}
				replaceContext = false
			}
			for k, val := range a.vector {
				ctx[k] = val
			}
		case a.name == "NIC" && a.isVector():
			if err := checkNIC(a.vector); err != nil {
				return err
			}
			if firstNIC {
				s.nicNetwork(v, a.vector)
				firstNIC = false
			}
		case systemAttrs[a.name]:
			if a.name != "APPEND" && a.name != "NIC_ALIAS" {
				v.system = append(v.system, a)
			}
		default:
			v.user = append(v.user, a)
			if rs.legacy && !strict && !a.isVector() {
				// The references a 6.x VM template's CONTEXT would carry
				// (TemplateContexts makes them explicit).
				ctx[a.name] = a.value
			}
		}
	}
	v.user = setAttr(v.user, attr{name: "SERVICE_ID", value: strconv.Itoa(v.svc.id)})
	v.user = setAttr(v.user, attr{name: "ROLE_NAME", value: rs.name})
	v.context = ctx
	return nil
}

// checkNIC is oned refusing a NIC whose network it cannot find: 7.x leaves
// NETWORK_ID null (written "") when a service network resolved to no ID,
// and an unresolved "$Name" is no ID either. (oned's own message differs.)
func checkNIC(nic map[string]string) error {
	id, hasID := nic["NETWORK_ID"]
	if !hasID && nic["NETWORK"] != "" {
		return nil
	}
	if n, err := strconv.Atoi(strings.TrimSpace(id)); err == nil && n >= 0 {
		return nil
	}
	return fmt.Errorf("[one.template.instantiate] cannot get IP/MAC lease: NIC NETWORK_ID %q is not a virtual network ID", id)
}

// finishContext resolves the CONTEXT's variables and adds what oned adds:
// the NIC's ETH0_* with NETWORK=YES, the OneGate endpoint and VMID with
// TOKEN=YES. Callers hold s.mu.
func (s *Sim) finishContext(v *vm) {
	ctx := v.context
	for k, val := range ctx {
		ctx[k] = s.resolveVars(v, val)
	}
	if strings.EqualFold(ctx["NETWORK"], "YES") {
		ctx["ETH0_IP"] = v.nic.ip.String()
		ctx["ETH0_MAC"] = v.nic.mac
		ctx["ETH0_MASK"] = v.nic.mask
		ctx["ETH0_NETWORK"] = v.nic.network
		ctx["ETH0_GATEWAY"] = v.nic.gateway.String()
		ctx["ETH0_DNS"] = v.nic.gateway.String()
	}
	if strings.EqualFold(ctx["TOKEN"], "YES") {
		ctx["ONEGATE_ENDPOINT"] = s.endpoint
		ctx["VMID"] = strconv.Itoa(v.id)
	}
	ctx["DISK_ID"] = "1"
	ctx["TARGET"] = "hda"
}

// nicNetwork names the VM's network after the service network its NIC
// points to (by the ID OneFlow resolved), or the NIC's own NETWORK.
func (s *Sim) nicNetwork(v *vm, nic map[string]string) {
	id := nic["NETWORK_ID"]
	for _, name := range sortedKeys(v.svc.spec.networks) {
		if ref := v.svc.spec.networks[name]; !ref.null && ref.id == id {
			v.netName, v.netID = name, id
		}
	}
	if n := nic["NETWORK"]; n != "" {
		v.netName = n
	}
}

func appendsContext(attrs []attr) bool {
	for _, a := range attrs {
		if a.name == "APPEND" && !a.isVector() {
			for _, p := range strings.Split(a.value, ",") {
				if strings.EqualFold(strings.TrimSpace(p), "CONTEXT") {
					return true
				}
			}
		}
	}
	return false
}

// setAttr replaces every attribute of that name with a.
func setAttr(list []attr, a attr) []attr {
	return append(removeAttr(list, a.name), a)
}

func removeAttr(list []attr, name string) []attr {
	out := list[:0:0]
	for _, x := range list {
		if x.name != name {
			out = append(out, x)
		}
	}
	return out
}

func lookup(list []attr, name string) (attr, bool) {
	for _, x := range list {
		if x.name == name {
			return x, true
		}
	}
	return attr{}, false
}

// isReady: the VM reported READY=YES, by an update OneFlow saw or by the
// attribute itself (OneFlow's periodic check). Callers hold s.mu.
func (s *Sim) isReady(v *vm) bool {
	if v.readyEvent {
		return true
	}
	a, ok := lookup(v.user, "READY")
	if !ok || a.isVector() {
		return false
	}
	val := strings.TrimSpace(a.value)
	if s.v.readyCaseInsensitive() {
		return strings.EqualFold(val, "YES")
	}
	return val == "YES"
}

// VMs lists the living VMs, by ID.
func (s *Sim) VMs() []VMInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []VMInfo
	for _, id := range sortedIDs(s.vms) {
		out = append(out, s.vms[id].info())
	}
	return out
}

// VM returns one VM, or false if it does not exist (any more).
func (s *Sim) VM(vmid int) (VMInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.vms[vmid]
	if v == nil {
		return VMInfo{}, false
	}
	return v.info(), true
}

// RoleVMs lists the VMs of one role of a service, in OneFlow's node order.
func (s *Sim) RoleVMs(serviceID int, roleName string) []VMInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	svc := s.services[serviceID]
	if svc == nil {
		return nil
	}
	r := svc.role(roleName)
	if r == nil {
		return nil
	}
	out := make([]VMInfo, 0, len(r.nodes))
	for _, v := range r.nodes {
		out = append(out, v.info())
	}
	return out
}

// UserTemplate returns the scalar attributes of a VM's USER_TEMPLATE (the
// last value of a repeated key; vectors left out), nil for an unknown VM.
func (s *Sim) UserTemplate(vmid int) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.vms[vmid]
	if v == nil {
		return nil
	}
	out := map[string]string{}
	for _, a := range v.user {
		if !a.isVector() {
			out[a.name] = a.value
		}
	}
	return out
}

// Context returns a copy of the CONTEXT written into a VM's context.sh.
func (s *Sim) Context(vmid int) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.vms[vmid]
	if v == nil {
		return nil
	}
	out := make(map[string]string, len(v.context))
	for k, val := range v.context {
		out[k] = val
	}
	return out
}

// SetWrongToken makes the server expect a different token from the VM, so
// every request it sends gets 401 (a VM whose token.txt is stale).
func (s *Sim) SetWrongToken(vmid int) { s.setWrong(vmid, true) }

// RestoreToken undoes SetWrongToken.
func (s *Sim) RestoreToken(vmid int) { s.setWrong(vmid, false) }

func (s *Sim) setWrong(vmid int, wrong bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.vms[vmid]; v != nil {
		v.wrong = wrong
	}
}

func sortedIDs[V any](m map[int]V) []int {
	ids := make([]int, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
	return ids
}
