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
	Contract        int
	MasterRole      string
	Address         string // raw ONEAPP_K8S_ADDRESS; see NodeAddress
	Port            int
	PodsNetwork     netip.Prefix
	ServicesNetwork netip.Prefix
	NodeName        string // "" means the VM's hostname
	Version         string // "" means the image's kubeadm version
	CNI             string
	TaintedMaster   bool
	TokenTTL        time.Duration // always positive: eternal join tokens are refused
}

// legacyContract is what a template without KeyContract speaks: the legacy
// appliance's variables, which contract 1 kept.
const legacyContract = 1

// Settings reads and checks the ONEAPP_* variables. Every problem is
// reported, each as a *SettingError naming its variable, joined into one
// error so an operator fixes a template in one pass.
func (v Vars) Settings() (Settings, error) {
	s := Settings{
		Address:    v.Get(KeyAddress),
		MasterRole: orDefault(v.Get(KeyMasterRole), DefaultMasterRole),
		NodeName:   v.Get(KeyNodeName),
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
	if s.PodsNetwork, err = parseNetwork(orDefault(v.Get(KeyPodsNetwork), DefaultPodsNetwork)); err != nil {
		bad(KeyPodsNetwork, "%v", err)
	}
	if s.ServicesNetwork, err = parseNetwork(orDefault(v.Get(KeyServicesNet), DefaultServicesNet)); err != nil {
		bad(KeyServicesNet, "%v", err)
	}
	if s.PodsNetwork.IsValid() && s.ServicesNetwork.IsValid() && s.PodsNetwork.Overlaps(s.ServicesNetwork) {
		bad(KeyServicesNet, "%s overlaps %s %s", s.ServicesNetwork, KeyPodsNetwork, s.PodsNetwork)
	}

	if s.NodeName != "" && (len(s.NodeName) > 253 || !dnsSubdomain.MatchString(s.NodeName)) {
		bad(KeyNodeName, "%q is not a lower-case DNS name (RFC 1123), as Kubernetes requires", s.NodeName)
	}
	if s.Version != "" {
		// kubeadm reads a version without a patch number as a release label
		// to look up online, which fails in an air-gapped VM: require x.y.z.
		if !k8sVersion.MatchString(s.Version) {
			bad(KeyVersion, "%q is not a Kubernetes version like v1.36.3 (major.minor.patch)", s.Version)
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
	// cluster (the legacy appliance's --token-ttl 0): refuse it.
	if s.TokenTTL, err = time.ParseDuration(ttl); err != nil || s.TokenTTL <= 0 {
		bad(KeyTokenTTL, "%q is not a positive duration like 24h or 90m", ttl)
	}
	return s, errors.Join(errs...)
}

var (
	roleName     = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	k8sVersion   = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)
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
