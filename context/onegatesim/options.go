package onegatesim

import (
	"errors"
	"net/netip"
	"time"
)

// Options configure a Sim. The zero value is usable: OpenNebula 7.4, VM IDs
// from 100, service IDs from 1, addresses from 192.0.2.0/24 (TEST-NET-1,
// never routed: the agents really talk to 127.0.0.1).
type Options struct {
	// Dir holds one context directory per VM (<Dir>/vm-<id>/). Empty: a
	// temporary directory that Close removes.
	Dir string
	// Version is the simulated OpenNebula release, "7.4", "6.10", "5.10"...
	Version string
	// VMIDBase is the first VM ID (0 or less: 100). ServiceIDBase likewise
	// is the first service ID (0 or less: 1).
	VMIDBase      int
	ServiceIDBase int
	// Network is the pool NIC addresses come from; the first address after
	// the network address is the gateway and DNS server.
	Network netip.Prefix
	// NetworkName is the NIC's NETWORK when the role's NIC does not name a
	// service network ("$Private" names Private).
	NetworkName string
	// Listen is where Start listens (default 127.0.0.1:0).
	Listen string
	// Endpoint overrides ONEGATE_ENDPOINT in contexts; needed when the
	// handler is served in-process before or without Start.
	Endpoint string
	// BaseContext is the CONTEXT of the role VMs' own template (the one
	// template_id names), before OneFlow merges into it. Nil: NETWORK=YES,
	// TOKEN=YES, as the onekube VM templates carry.
	BaseContext map[string]string
	// TemplateContexts is the CONTEXT of a VM template by ID, for the roles
	// whose template_id (6.x vm_template) names it, in place of BaseContext.
	// For those roles the sim is as strict as oned with 6.x: an attribute
	// of vm_template_contents reaches CONTEXT only through a "$NAME" there.
	// For other roles 6.x copies every such attribute into CONTEXT, as if
	// the template referenced them all (onekube's templates reference every
	// input).
	TemplateContexts map[int]map[string]string
	// Cooldown replaces OneFlow's :default_cooldown:, the cooldown after a
	// scale of a role that sets none: 0 keeps the real 300 s, a negative
	// value means none.
	Cooldown time.Duration
	// ShutdownTimeout turns scale-down into OpenNebula's soft terminate
	// (shutdown.go): the oldest VMs go to LCM_STATE SHUTDOWN, OnVMShutdown
	// hooks run (the guest's shutdown), and each VM is destroyed when
	// PoweredOff says the guest is done or after this timeout (kvmrc's
	// SHUTDOWN_TIMEOUT is 180 s). Zero keeps the immediate removal.
	ShutdownTimeout time.Duration
	// Deny disables OneGate permissions, as ":permissions:" in
	// onegate-server.conf does, e.g. "vm:update" or "service:change_cardinality".
	Deny []string
	// Clock stamps events and times fault windows (default time.Now).
	Clock func() time.Time
	// Logf receives one line per notable happening (default: discarded).
	// Lines never carry tokens or attribute values.
	Logf func(format string, args ...any)
}

// HardenedDeny is Options.Deny for a hardened onegate-server.conf
// (:update_by_id: false, :action_by_id: false, :change_cardinality: false):
// no VM can write, act on or scale its siblings any more. Reads, a VM's own
// updates and the restricted-attribute bypass on its own template remain
// (docs/trust.md, "Hardening onegate-server.conf").
func HardenedDeny() []string {
	return []string{"vm:update_by_id", "vm:action_by_id", "service:change_cardinality"}
}

// DefaultCooldown is oneflow-server.conf's :default_cooldown: (300 s).
const DefaultCooldown = 300 * time.Second

// DefaultWaitTimeout bounds a Wait call whose context carries no deadline.
const DefaultWaitTimeout = 2 * time.Minute

var defaultNetwork = netip.MustParsePrefix("192.0.2.0/24")

func (o *Options) withDefaults() {
	if o.VMIDBase <= 0 {
		o.VMIDBase = 100
	}
	if o.ServiceIDBase <= 0 {
		o.ServiceIDBase = 1
	}
	if !o.Network.IsValid() {
		o.Network = defaultNetwork
	}
	o.Network = o.Network.Masked()
	if o.NetworkName == "" {
		o.NetworkName = "onekube-sim"
	}
	if o.Listen == "" {
		o.Listen = "127.0.0.1:0"
	}
	if o.BaseContext == nil {
		o.BaseContext = map[string]string{"NETWORK": "YES", "TOKEN": "YES"}
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
}

// TemplateContext is the CONTEXT of a VM template in template syntax (as
// flow.RenderVMTemplate writes it), for Options.TemplateContexts.
func TemplateContext(text string) (map[string]string, error) {
	attrs, err := parseTemplate(text)
	if err != nil {
		return nil, err
	}
	a, ok := lookup(attrs, "CONTEXT")
	if !ok || !a.isVector() {
		return nil, errors.New("the VM template has no CONTEXT vector")
	}
	return a.vector, nil
}
