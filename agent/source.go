package agent

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// ContextSource is the production Deps.LoadSource: it reads the VM context
// with vmcontext.Load and resolves the settings from its variables. An
// explicit contextFile is a path the operator named, taken as given (not
// joined to root); without it, credential discovery looks under root.
func ContextSource(root system.Root, contextFile string, getenv func(string) string) func(context.Context) (*Source, error) {
	return func(ctx context.Context) (*Source, error) {
		vc, err := gate.LoadContext(ctx, string(root), contextFile, getenv)
		if err != nil {
			return nil, err
		}
		return &Source{
			Creds:        vc.Creds,
			OneGateCA:    vc.OneGateCA,
			Resolve:      func(self *onegate.VM, role string) (Config, error) { return ConfigFromVars(vc.Vars, self, role) },
			Worker:       contextWorker(vc.Vars),
			MasterHinted: vc.Vars.Get(vmcontext.KeyMasterVMID) != "",
		}, nil
	}
}

// ConfigFromVars resolves the agent's Config from context variables, this
// VM as OneGate describes it (self) and its role as OneFlow's service
// document lists it: the validated settings; the NIC ONEAPP_K8S_ADDRESS
// picks, with network names from OneGate; address families that agree;
// and the node name <prefix>-<VMID>, from the VM's OpenNebula identity,
// never from the image's hostname nor from ROLE_NAME, which any sibling
// can rewrite (docs/trust.md).
func ConfigFromVars(vars vmcontext.Vars, self *onegate.VM, role string) (Config, error) {
	s, err := vars.Settings()
	if err != nil {
		return Config{}, err
	}
	nic, addr, err := s.Address.Pick(mergeNICs(vars.NICs(), self.NICs))
	if err != nil {
		return Config{}, err
	}
	if err := vmcontext.CheckFamilies(addr, s.PodsNetwork, s.ServicesNetwork); err != nil {
		return Config{}, err
	}
	if addr.Is6() && s.CNI == "calico" {
		return Config{}, &vmcontext.SettingError{Key: vmcontext.KeyCNI, Msg: fmt.Sprintf("calico: the manifest the image carries is set up for IPv4; the node address %s is IPv6 (use flannel or none)", addr)}
	}
	if s.TokenTTL <= 0 {
		// kubeadm reads 0 as "never expires"; a join credential must not
		// sit in OneGate forever.
		return Config{}, fmt.Errorf("%s: %s is not allowed, the bootstrap token needs a lifetime (e.g. 24h)", vmcontext.KeyTokenTTL, s.TokenTTL)
	}
	endpoint := s.ControlPlaneEndpoint
	if endpoint == "" {
		endpoint = vmcontext.LocalBalancer
	}
	return Config{
		Endpoint:        endpoint,
		Selector:        s.Address,
		MasterRole:      s.MasterRole,
		Address:         addr,
		NIC:             nic.Index,
		Port:            s.Port,
		PodsNetwork:     s.PodsNetwork,
		ServicesNetwork: s.ServicesNetwork,
		NodeName:        vmcontext.NodeName(s.NodePrefix, role, self.ID),
		Version:         s.Version,
		CNI:             s.CNI,
		TaintedMaster:   s.TaintedMaster,
		TokenTTL:        s.TokenTTL,
		IgnorePreflight: s.IgnorePreflight,
		MasterVMID:      masterVMID(s.MasterVMID),
		CertValidity:    s.CertValidity,
	}, nil
}

// mergeNICs adds what only OneGate knows, each NIC's virtual network name,
// to the context's ETHn NICs, matched by MAC. Without ETHn variables
// (CONTEXT NETWORK=NO) OneGate's NICs, in its order, are the NICs.
func mergeNICs(ctx []vmcontext.NICInfo, og []onegate.NIC) []vmcontext.NICInfo {
	var plain []onegate.NIC
	for _, n := range og {
		if !n.Alias {
			plain = append(plain, n)
		}
	}
	if len(ctx) == 0 {
		out := make([]vmcontext.NICInfo, 0, len(plain))
		for i, n := range plain {
			ni := vmcontext.NICInfo{Index: i, MAC: n.MAC, NetworkName: n.Network}
			ni.IP, _ = netip.ParseAddr(n.IP)
			ni.IP6, _ = netip.ParseAddr(n.IP6)
			ni.IP6ULA, _ = netip.ParseAddr(n.IP6ULA)
			out = append(out, ni)
		}
		return out
	}
	out := append([]vmcontext.NICInfo(nil), ctx...)
	for i := range out {
		for _, n := range plain {
			if n.MAC != "" && strings.EqualFold(n.MAC, out[i].MAC) {
				out[i].NetworkName = n.Network
			}
		}
	}
	return out
}

// masterVMID is the settings' -1-for-absent ID as an optional one.
func masterVMID(id int) *int {
	if id < 0 {
		return nil
	}
	return &id
}
