package agent

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	"github.com/onekube/onekube/agent/lb/lbconfig"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// seedBalancer writes the local balancer's first backends
// (/var/lib/onekube/lb.json) before kubeadm runs through it: kubeadm init's
// own admin.conf and every join go through 127.0.0.1:6444. The addresses
// are the masters' as oned reports their NICs through OneGate, which no
// sibling can rewrite: a master's own address and every other master VM's
// Kubernetes NIC (ONEAPP_K8S_ADDRESS applied to that VM's NICs); for a
// worker, the READY masters it found. The balancer then follows the API
// servers' own list. Nothing to do with a user's endpoint.
func seedBalancer(_ context.Context, d Data) error {
	cfg, n := d.Config(), d.Node()
	if !cfg.LocalBalancer() {
		return nil
	}
	var backends []string
	switch n.Kind {
	case KindWorker:
		m := d.Master()
		backends = append(backends, lbconfig.Backend(m.Address, m.Port))
		for _, a := range m.Others {
			backends = append(backends, lbconfig.Backend(a, m.Port))
		}
	default:
		backends = append(backends, lbconfig.Backend(cfg.Address, cfg.Port))
		for _, id := range n.MasterIDs {
			if a, ok := masterAddress(n.Masters[id], cfg); ok {
				backends = append(backends, lbconfig.Backend(a, cfg.Port))
			}
		}
	}
	slices.Sort(backends)
	backends = slices.Compact(backends)
	if err := d.Root().MkdirAll("/var/lib/onekube", 0o700); err != nil {
		return err
	}
	if err := lbconfig.WriteConfig(d.Root().Path(lbconfig.ConfigFile), lbconfig.Config{Backends: backends, Source: lbconfig.SourceOneGate}); err != nil {
		return fmt.Errorf("writing the balancer's backends: %w", err)
	}
	d.Log().Info("local balancer seeded", "endpoint", cfg.Endpoint, "backends", backends)
	return nil
}

// masterAddress is a master VM's Kubernetes address: the one it published
// when that is one of its NICs, else the NIC this service's
// ONEAPP_K8S_ADDRESS picks among its NICs.
func masterAddress(vm *onegate.VM, cfg *Config) (netip.Addr, bool) {
	if vm == nil {
		return netip.Addr{}, false
	}
	if raw := vm.UserTemplate[vmcontext.KeyPubMaster]; raw != "" && ownsAddress(vm, raw) {
		a, _ := parsePublishedAddr(raw)
		return a.Unmap(), unusableAddress(a) == ""
	}
	_, a, err := cfg.Selector.Pick(mergeNICs(nil, vm.NICs))
	if err != nil || unusableAddress(a) != "" || a.Is6() != cfg.Address.Is6() {
		return netip.Addr{}, false
	}
	return a, true
}
