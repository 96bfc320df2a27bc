package context

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Settings are the ONEAPP_* inputs with defaults applied and validated.
type Settings struct {
	Contract   int
	MasterRole string
	// Address picks the NIC for Kubernetes traffic (ONEAPP_K8S_ADDRESS).
	Address         AddressSelector
	Port            int
	PodsNetwork     netip.Prefix
	ServicesNetwork netip.Prefix
	// NodePrefix is ONEAPP_K8S_NODENAME: the node name is
	// <prefix>-<VMID>; "" derives the prefix from ROLE_NAME (NodeName).
	NodePrefix string
	// Version is a Kubernetes release the template asks for; the agent
	// checks it against the image's kubeadm. "" means whatever the image has.
	Version       string
	CNI           string
	TaintedMaster bool
	TokenTTL      time.Duration // always positive: eternal join tokens are refused
	// IgnorePreflight are kubeadm preflight check names to ignore on this
	// node; nil for none.
	IgnorePreflight []string
	// ControlPlaneEndpoint is ONEAPP_K8S_CONTROL_PLANE_EP as host:port, ""
	// for the local balancer (LocalBalancer).
	ControlPlaneEndpoint string
	// MasterVMID is KeyMasterVMID, -1 when absent: a hint, checked against
	// the service before it is trusted (the agent reads that VM through
	// OneGate, which answers only for VMs of this VM's own service).
	MasterVMID int
	// CertValidity is ONEAPP_K8S_CERT_VALIDITY, the control-plane leaf
	// certificates' lifetime; 0 keeps kubeadm's default (a year).
	CertValidity time.Duration
}

// legacyContract is what a template without KeyContract speaks: the legacy
// appliance's variables, which contract 1 kept.
const legacyContract = 1

// Settings reads and checks the ONEAPP_* variables. Every problem is
// reported, each as a *SettingError naming its variable, joined into one
// error so an operator fixes a template in one pass.
func (v Vars) Settings() (Settings, error) {
	s := Settings{
		MasterRole: orDefault(v.Get(KeyMasterRole), DefaultMasterRole),
		NodePrefix: v.Get(KeyNodeName),
		Version:    v.Get(KeyVersion),
		CNI:        strings.ToLower(orDefault(v.Get(KeyCNI), DefaultCNI)),
	}
	var errs []error
	bad := func(key, format string, a ...any) {
		errs = append(errs, &SettingError{Key: key, Msg: fmt.Sprintf(format, a...)})
	}

	s.Contract = legacyContract
	if raw := v.Get(KeyContract); raw != "" {
		n, err := strconv.Atoi(raw)
		switch {
		case err != nil || n < 1:
			bad(KeyContract, "%q is not a contract version", raw)
		case n > ContractVersion:
			errs = append(errs, fmt.Errorf("%s: %w: template speaks %d, agent %d", KeyContract, ErrContractTooNew, n, ContractVersion))
		default:
			s.Contract = n
		}
	}
	if !roleName.MatchString(s.MasterRole) {
		bad(KeyMasterRole, "%q is not a role name", s.MasterRole)
	}

	s.Port = DefaultPort
	if raw := v.Get(KeyPort); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > 65535 {
			bad(KeyPort, "%q is not a TCP port (1-65535)", raw)
		} else {
			s.Port = n
		}
	}

	var err error
	if s.Address, err = ParseAddressSelector(v.Get(KeyAddress)); err != nil {
		bad(KeyAddress, "%v", err)
	}
	if s.PodsNetwork, err = parseNetwork(orDefault(v.Get(KeyPodsNetwork), DefaultPodsNetwork)); err != nil {
		bad(KeyPodsNetwork, "%v", err)
	} else if err := checkPodsSize(s.PodsNetwork); err != nil {
		bad(KeyPodsNetwork, "%v", err)
	}
	if s.ServicesNetwork, err = parseNetwork(orDefault(v.Get(KeyServicesNet), DefaultServicesNet)); err != nil {
		bad(KeyServicesNet, "%v", err)
	} else if err := checkServicesSize(s.ServicesNetwork); err != nil {
		bad(KeyServicesNet, "%v", err)
	}
	if p, sv := s.PodsNetwork, s.ServicesNetwork; p.IsValid() && sv.IsValid() {
		switch {
		case p.Addr().Is6() != sv.Addr().Is6():
			bad(KeyServicesNet, "%s and %s %s are of different IP families (dual stack is not supported)", sv, KeyPodsNetwork, p)
		case p.Overlaps(sv):
			bad(KeyServicesNet, "%s overlaps %s %s", sv, KeyPodsNetwork, p)
		}
	}

	if s.NodePrefix != "" {
		if err := CheckNodePrefix(s.NodePrefix); err != nil {
			bad(KeyNodeName, "%v", err)
		}
	}
	if s.Version != "" {
		// kubeadm reads a version without a patch number as a release label
		// to look up online, which fails in an air-gapped VM: require x.y.z.
		if !k8sVersion.MatchString(s.Version) {
			bad(KeyVersion, "%q is not a Kubernetes version like v1.37.2 (major.minor.patch)", s.Version)
		} else if !strings.HasPrefix(s.Version, "v") {
			s.Version = "v" + s.Version
		}
	}
	if !slices.Contains(CNIPlugins, s.CNI) {
		bad(KeyCNI, "%q is not one of %s", s.CNI, strings.Join(CNIPlugins, ", "))
	}
	// Empty keeps kubeadm's own default, the control-plane taint: workloads
	// stay off the master unless the template says otherwise.
	if s.TaintedMaster, err = parseYesNo(orDefault(v.Get(KeyTaintedMaster), "YES")); err != nil {
		bad(KeyTaintedMaster, "%v", err)
	}
	ttl := orDefault(v.Get(KeyTokenTTL), DefaultTokenTTL)
	// A join token that never expires is a standing credential to join the
	// cluster (the legacy appliance's --token-ttl 0): refuse it, and any
	// lifetime outside the bounds serve refreshes within.
	if s.TokenTTL, err = ParseTokenTTL(ttl); err != nil {
		bad(KeyTokenTTL, "%v", err)
	}
	if s.ControlPlaneEndpoint, err = ParseControlPlaneEndpoint(v.Get(KeyControlPlaneEP), s.Port); err != nil {
		bad(KeyControlPlaneEP, "%v", err)
	}
	s.MasterVMID = -1
	if raw := v.Get(KeyMasterVMID); raw != "" {
		if n, err := strconv.Atoi(raw); err != nil || n < 0 {
			bad(KeyMasterVMID, "%q is not a VM ID (the template should set it to \"${master.vm.id}\")", raw)
		} else {
			s.MasterVMID = n
		}
	}
	if raw := v.Get(KeyIgnorePreflight); raw != "" {
		if s.IgnorePreflight, err = parsePreflightList(raw); err != nil {
			bad(KeyIgnorePreflight, "%v", err)
		}
	}
	if raw := v.Get(KeyCertValidity); raw != "" {
		if s.CertValidity, err = ParseCertValidity(raw, v.Get(KeyCertRenewBefore)); err != nil {
			bad(KeyCertValidity, "%v", err)
		}
	}
	return s, errors.Join(errs...)
}

// parsePreflightList reads kubeadm check names ("NumCPU,SystemVerification").
// "all" is refused: it would also hide the checks that protect a node from
// a second kubeadm run over a live control plane.
func parsePreflightList(raw string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(raw, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
			continue
		case strings.EqualFold(f, "all"):
			return nil, errors.New(`"all" is not allowed; name the checks to ignore`)
		case !preflightName.MatchString(f):
			return nil, fmt.Errorf("%q is not a kubeadm preflight check name", f)
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

var (
	roleName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	// Check names look like "NumCPU" or "FileContent--proc-sys-net-ipv4-ip_forward".
	preflightName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)
	k8sVersion    = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)
)

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// parseNetwork accepts a CIDR with no host bits set: kubeadm would take
// 10.244.1.0/16 silently as 10.244.0.0/16, which is rarely what was meant.
func parseNetwork(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not a CIDR like 10.244.0.0/16", s)
	}
	if m := p.Masked(); m != p {
		return netip.Prefix{}, fmt.Errorf("%q has host bits set; did you mean %s?", s, m)
	}
	return p, nil
}

// Kubernetes' sizing rules for the networks, as kubeadm validates them
// (cmd/kubeadm/app/apis/kubeadm/validation: ValidateServiceSubnetSize with
// MaximumBitsForServiceSubnet = 20; ValidatePodSubnetNodeMask with the
// controller manager's default node masks /24 and /64 and
// PodSubnetNodeMaskMaxDiff = 16).
const (
	maxServiceBits  = 20
	nodeMask4       = 24
	nodeMask6       = 64
	podNodeMaxDiff  = 16
	exampleServices = "fd20::/112"
)

func checkServicesSize(p netip.Prefix) error {
	if host := p.Addr().BitLen() - p.Bits(); host > maxServiceBits {
		example := "10.96.0.0/12"
		if p.Addr().Is6() {
			example = exampleServices
		}
		return fmt.Errorf("%s is too large: kubeadm allows at most %d host bits (e.g. %s)", p, maxServiceBits, example)
	}
	return nil
}

func checkPodsSize(p netip.Prefix) error {
	node := nodeMask4
	if p.Addr().Is6() {
		node = nodeMask6
	}
	switch {
	case p.Bits() > node:
		return fmt.Errorf("%s is smaller than one node's /%d: make it /%d or larger", p, node, node)
	case node-p.Bits() > podNodeMaxDiff:
		return fmt.Errorf("%s is too large: kubeadm allows /%d to /%d", p, node-podNodeMaxDiff, node)
	}
	return nil
}

// parseYesNo reads OpenNebula's boolean inputs: YES/NO as the appliance
// writes them, plus the usual spellings; empty is no.
func parseYesNo(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "", "no", "false", "0", "off":
		return false, nil
	case "yes", "true", "1", "on":
		return true, nil
	}
	return false, fmt.Errorf("%q is neither YES nor NO", s)
}
