// Package onegate is a client for OpenNebula's OneGate REST service, as a VM
// sees it: its own VM, the VMs of its service, and writes to its own
// USER_TEMPLATE. The wire behaviour follows shared/reference/onegate.md.
package onegate

import (
	"net/netip"
	"strings"
)

// VM is the decoded GET /vm or GET /vms/:id document. The server sends every
// scalar as a string; decoding turns IDs and states into ints.
type VM struct {
	ID       int
	Name     string
	State    int // 3 = ACTIVE
	LCMState int // 3 = RUNNING
	// UserTemplate holds the scalar USER_TEMPLATE values (ROLE_NAME,
	// SERVICE_ID, READY, ONEGATE_K8S_*). Nested vectors are left out.
	UserTemplate map[string]string
	NICs         []NIC
	// STime is when oned created the VM (STIME, epoch seconds), which
	// `onevm recover --recreate` keeps (src/vm/VirtualMachine.cc sets it
	// only at allocation). Only the extended service document carries
	// it; 0 otherwise.
	STime int64
	// Context holds the scalar TEMPLATE.CONTEXT values. Only the extended
	// service document carries them (GET /vm never does); nil otherwise.
	Context map[string]string
	// Disks is TEMPLATE.DISK, oned's own record of the VM's disks. Only
	// the extended service document carries it (build_vm_hash keeps no
	// DISK); nil otherwise.
	Disks []Disk
}

// Disk is one entry of TEMPLATE.DISK: what detachdisk needs (DISK_ID)
// to remove a disk attached from image ImageID.
type Disk struct {
	ID      int
	ImageID int // -1 for a volatile disk
	Target  string
}

// NIC is one entry of TEMPLATE.NIC (or NIC_ALIAS) as OneGate exposes it
// (build_vm_hash keeps IP, IP6_GLOBAL, IP6_SITE, IP6_LINK, NETWORK, MAC,
// NAME, PARENT and EXTERNAL*).
type NIC struct {
	Name    string
	IP      string
	IP6     string // IP6_GLOBAL, else IP6 (a static IPv6 range)
	IP6ULA  string // IP6_SITE (unique local)
	MAC     string
	Network string // the virtual network's name
	Alias   bool
}

// Addrs returns the NIC's unicast addresses oned leased to it, IPv4 first,
// skipping empty and malformed ones (link-local addresses are not leases).
func (n NIC) Addrs() []netip.Addr {
	var out []netip.Addr
	for _, s := range []string{n.IP, n.IP6, n.IP6ULA} {
		if a, err := netip.ParseAddr(strings.TrimSpace(s)); err == nil && a.Zone() == "" {
			out = append(out, a.Unmap())
		}
	}
	return out
}

// Addrs returns every address of every NIC and NIC alias of the VM, as
// oned reports them through OneGate.
func (vm *VM) Addrs() []netip.Addr {
	var out []netip.Addr
	for _, n := range vm.NICs {
		out = append(out, n.Addrs()...)
	}
	return out
}

// Service is the decoded GET /service document in its short 6.x/7.x form
// (5.x and extended responses decode into the same shape).
type Service struct {
	ID    int
	Name  string
	State int // 2 = RUNNING
	Roles []Role
}

// Role is one role of a service. Nodes carry only VM IDs in the short form;
// read a node's USER_TEMPLATE with GET /vms/:id.
type Role struct {
	Name        string
	Cardinality int
	State       int
	Nodes       []Node
}

// Node is one VM of a role.
type Node struct {
	VMID int
	// VM is set only when the response carried the VM's template (5.x, or
	// GET /service?extended=true).
	VM *VM
}

// Role returns the role with the given name, or nil.
func (s *Service) Role(name string) *Role {
	for i := range s.Roles {
		if s.Roles[i].Name == name {
			return &s.Roles[i]
		}
	}
	return nil
}

// KV is one key to write into a USER_TEMPLATE. A slice of them keeps the
// order of the lines sent, so requests are deterministic.
type KV struct {
	Key   string
	Value string
}
