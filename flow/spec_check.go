package flow

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	vmcontext "github.com/onekube/onekube/context"
)

var (
	roleWord = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
)

var (
	shutdownActions = []string{"terminate", "terminate-hard", "shutdown", "shutdown-hard"}
	deployments     = []string{"none", "straight"}
	policyTypes     = []string{"CHANGE", "CARDINALITY", "PERCENTAGE_CHANGE"}
)

// CheckSpec checks a cluster spec (defaults applied first) and returns its
// problems sorted; Render refuses a spec with errors.
func CheckSpec(s Spec) []Problem {
	applyDefaults(&s)
	var ps problems
	if strings.TrimSpace(s.Metadata.Name) == "" {
		ps.errorf("metadata.name", "the cluster needs a name")
	} else if err := checkObjectName(s.Metadata.Name); err != nil {
		ps.errorf("metadata.name", "%q: %v", s.Metadata.Name, err)
	} else {
		for _, role := range []string{RoleMaster, RoleWorker} {
			path := role + ".templateName"
			if r, _ := s.Role(role); r.TemplateName == "" {
				path = "metadata.name"
			}
			if name := s.TemplateName(role); checkObjectName(name) != nil {
				ps.errorf(path, "the %s VM template name %q: %v", role, name, checkObjectName(name))
			}
		}
	}
	checkLimits(&ps, s)
	checkSpecText(&ps, s)
	checkKubernetes(&ps, s)
	checkNetwork(&ps, s.Network)
	checkRole(&ps, RoleMaster, s.Master)
	checkRole(&ps, RoleWorker, s.Worker)
	checkAutoscale(&ps, s)
	if m := s.Master; m.MinVMs(RoleMaster) != m.count() || m.MaxVMs(RoleMaster) != m.count() {
		ps.warnf("master", "min %d and max %d differ from the count %d: OneFlow would then let a OneGate request, a policy or 'oneflow scale' change the number of etcd members; keep min = max = count", m.MinVMs(RoleMaster), m.MaxVMs(RoleMaster), m.count())
	}
	if len(s.SpreadRoles()) > 0 && checkObjectName(s.Metadata.Name) == nil {
		if err := checkObjectName(s.VMGroupName()); err != nil {
			ps.errorf("metadata.name", "the VM group name %q: %v", s.VMGroupName(), err)
		}
	}
	checkMasterCount(&ps, "master.count", s.Master.count())
	if ep := s.Kubernetes.ControlPlaneEndpoint; ep != "" {
		if _, err := vmcontext.ParseControlPlaneEndpoint(ep, s.Kubernetes.Port); err != nil {
			ps.errorf("kubernetes.controlPlaneEndpoint", "%s: %v", vmcontext.KeyControlPlaneEP, err)
		}
	}
	checkSpecInputs(&ps, s)
	if !slices.Contains(deployments, s.Service.Deployment) {
		ps.errorf("service.deployment", "%q: want one of %s", s.Service.Deployment, strings.Join(deployments, ", "))
	}
	if a := s.Service.ShutdownAction; a != "" && !slices.Contains(shutdownActions, a) {
		ps.errorf("service.shutdownAction", "%q: want one of %s", a, strings.Join(shutdownActions, ", "))
	}
	if !*s.Service.ReadyStatusGate && s.Service.Deployment == "straight" {
		ps.warnf("service.readyStatusGate", "without the ready status gate, workers start as soon as the master VM boots, before Kubernetes is up, and must wait for it")
	}
	return ps.sorted()
}

// checkAutoscale: autoscaling bounds are the worker role's; set, they are
// its min_vms and max_vms, which the count must lie within (OneFlow refuses
// the template otherwise, ServiceTemplate#validate_values, and a merge
// document's cardinality outside them at instantiate, which validates the
// merged template again, ServiceTemplate#instantiate; release-7.4.0 and
// 6.10.5; checkRole). Explicit min/max that differ would make two
// sources of truth for one bound.
func checkAutoscale(ps *problems, s Spec) {
	if s.Master.Autoscale != "" {
		ps.errorf("master.autoscale", "%q: only the worker role is autoscaled; masters keep their count (etcd quorum)", s.Master.Autoscale)
	}
	w := s.Worker
	lo, hi, on, err := ParseAutoscale(w.Autoscale)
	if err != nil {
		ps.errorf("worker.autoscale", "%v", err)
		return
	}
	if !on {
		return
	}
	if w.Min != nil && *w.Min != lo {
		ps.errorf("worker.min", "%d differs from autoscale's minimum %d: set one of them", *w.Min, lo)
	}
	if w.Max != nil && *w.Max != hi {
		ps.errorf("worker.max", "%d differs from autoscale's maximum %d: set one of them", *w.Max, hi)
	}
}

func checkKubernetes(ps *problems, s Spec) {
	k := s.Kubernetes
	if k.Version != "" {
		ps.errorf("kubernetes.version", "%q: the appliance image carries one Kubernetes release (its kubeadm, kubelet and preloaded images), picked when the image is built; remove this field", k.Version)
	}
	if k.Port < 1 || k.Port > 65535 {
		ps.errorf("kubernetes.port", "%d is not a TCP port", k.Port)
	}
	if !slices.Contains(vmcontext.CNIPlugins, k.CNI) {
		ps.errorf("kubernetes.cni", "%q: want one of %s", k.CNI, strings.Join(vmcontext.CNIPlugins, ", "))
	}
	if _, err := vmcontext.ParseTokenTTL(k.TokenTTL); err != nil {
		ps.errorf("kubernetes.tokenTTL", "%v", err)
	}
	var ranges []namedPrefix
	for _, c := range []struct{ path, what, cidr string }{
		{"kubernetes.podsNetwork", "pod network", k.PodsNetwork},
		{"kubernetes.servicesNetwork", "service network", k.ServicesNetwork},
		{"network.cidr", "node network", s.Network.CIDR},
	} {
		if c.cidr == "" {
			continue
		}
		p, err := parseCIDR(c.cidr)
		if err != nil {
			ps.errorf(c.path, "%v", err)
			continue
		}
		ranges = append(ranges, namedPrefix{c.path, c.what, p})
	}
	checkOverlaps(ps, ranges)
	if k.Address != "" {
		checkAddress(ps, "kubernetes.address", k.Address, ranges[:min(2, len(ranges))])
	}
}

func checkNetwork(ps *problems, n Network) {
	if !roleWord.MatchString(n.Name) {
		ps.errorf("network.name", "%q: a OneFlow network name may hold only letters, digits and _", n.Name)
	}
	if n.ID != nil && *n.ID < 0 {
		ps.errorf("network.id", "%d is not a virtual network ID", *n.ID)
	}
	if strings.Contains(n.Description, "|") {
		ps.errorf("network.description", "must not contain |, the field separator")
	}
}

func checkRole(ps *problems, name string, r Role) {
	n, lo, hi := r.count(), r.MinVMs(name), r.MaxVMs(name)
	switch {
	case n < 0:
		ps.errorf(name+".count", "%d VMs: want 0 or more", n)
	case lo < 0:
		ps.errorf(name+".min", "%d: want 0 or more", lo)
	case lo > n:
		ps.errorf(name+".min", "min %d is above the count %d", lo, n)
	case n > hi:
		ps.errorf(name+".max", "max %d is below the count %d", hi, n)
	}
	if r.TemplateID != nil && *r.TemplateID < 0 {
		ps.errorf(name+".templateID", "%d is not a VM template ID", *r.TemplateID)
	}
	checkCPU(ps, name+".cpu", r.CPU)
	if r.VCPU < 1 {
		ps.errorf(name+".vcpu", "%d: want 1 or more", r.VCPU)
	}
	if r.MemoryMB < 1 {
		ps.errorf(name+".memoryMB", "%d: want 1 or more", r.MemoryMB)
	}
	if name == RoleMaster && r.MemoryMB < 1700 {
		ps.warnf(name+".memoryMB", "%d MB is below kubeadm's control-plane minimum (1700 MB): kubeadm init fails its preflight checks", r.MemoryMB)
	}
	if name == RoleMaster && r.VCPU < 2 {
		ps.warnf(name+".vcpu", "%d VCPU is below kubeadm's control-plane minimum (2): kubeadm init fails its preflight checks", r.VCPU)
	}
	if r.Disk.Image != "" && r.Disk.ImageID != nil {
		ps.errorf(name+".disk", "set image or imageID, not both")
	}
	if r.Disk.ImageID != nil && *r.Disk.ImageID < 0 {
		ps.errorf(name+".disk.imageID", "%d is not an image ID", *r.Disk.ImageID)
	}
	if r.Disk.SizeMB < 0 {
		ps.errorf(name+".disk.sizeMB", "%d: want 0 (image size) or more", r.Disk.SizeMB)
	}
	if r.Cooldown != nil && *r.Cooldown < 0 {
		ps.errorf(name+".cooldown", "%d: want 0 or more seconds", *r.Cooldown)
	}
	if a := r.ShutdownAction; a != "" && !slices.Contains(shutdownActions, a) {
		ps.errorf(name+".shutdownAction", "%q: want one of %s", a, strings.Join(shutdownActions, ", "))
	}
	for i, p := range r.ElasticityPolicies {
		checkSpecPolicy(ps, fmt.Sprintf("%s.elasticityPolicies[%d]", name, i), p.Type, p.MinAdjustStep,
			[]*int{p.PeriodNumber, p.Period, p.Cooldown})
		if err := CheckExpression(p.Expression); err != nil {
			ps.errorf(fmt.Sprintf("%s.elasticityPolicies[%d].expression", name, i), "%v", err)
		}
	}
	specPolicies(ps, name, r)
	for i, p := range r.ScheduledPolicies {
		path := fmt.Sprintf("%s.scheduledPolicies[%d]", name, i)
		checkSpecPolicy(ps, path, p.Type, p.MinAdjustStep, nil)
		switch {
		case (p.StartTime == "") == (p.Recurrence == ""):
			ps.errorf(path, "set exactly one of startTime and recurrence")
		case p.Recurrence != "":
			if err := CheckRecurrence(p.Recurrence); err != nil {
				ps.errorf(path+".recurrence", "%v", err)
			}
		default:
			if err := checkStartTime(p.StartTime); err != nil {
				ps.warnf(path+".startTime", "%v", err)
			}
		}
	}
}

// checkCPU: oned counts a VM's CPU in hundredths of a core, truncating
// (sr.cpu = (int)(fcpu * 100) in VirtualMachine::get_capacity,
// src/vm/VirtualMachine.cc): below 0.01 the VM reserves nothing on its
// host, and a third decimal is dropped. +Inf is left to the MaxCPU limit.
func checkCPU(ps *problems, path string, cpu float64) {
	text := strconv.FormatFloat(cpu, 'g', -1, 64)
	_, frac, _ := strings.Cut(strconv.FormatFloat(cpu, 'f', -1, 64), ".")
	switch {
	case !(cpu >= MinCPU): // NaN too
		ps.errorf(path, "%s: want at least %g: oned counts CPU in hundredths of a core", text, MinCPU)
	case !math.IsInf(cpu, 0) && len(frac) > 2:
		ps.errorf(path, "%s: at most two decimals: oned counts CPU in hundredths of a core and drops the rest", text)
	}
}

func checkSpecPolicy(ps *problems, path, typ string, step *int, nonNeg []*int) {
	if !slices.Contains(policyTypes, typ) {
		ps.errorf(path+".type", "%q: want one of %s", typ, strings.Join(policyTypes, ", "))
	}
	if step != nil && *step < 1 {
		ps.errorf(path+".minAdjustStep", "%d: want 1 or more", *step)
	}
	for _, v := range nonNeg {
		if v != nil && *v < 0 {
			ps.errorf(path, "periods and cooldowns must be 0 or more")
		}
	}
}

func checkSpecInputs(ps *problems, s Spec) {
	seen := map[string]bool{}
	for i, u := range s.UserInputs {
		path := fmt.Sprintf("userInputs[%d]", i)
		switch {
		case builtinInput(u.Name) || u.Name == vmcontext.KeyMasterRole || u.Name == vmcontext.KeyContract:
			ps.errorf(path+".name", "%q is a built-in input; set it through its own spec field", u.Name)
		case seen[u.Name]:
			ps.errorf(path+".name", "%q is declared twice", u.Name)
		case u.Name == s.Network.Name:
			ps.errorf(path+".name", "%q is also the network input's name", u.Name)
		}
		seen[u.Name] = true
		ws, err := u.check()
		if err != nil {
			ps.errorf(path, "%v", err)
		}
		for _, w := range ws {
			ps.warnf(path, "%s", w)
		}
	}
	for _, u := range UserInputs(s) {
		if builtinInput(u.Name) && strings.Contains(u.Default, "|") {
			ps.errorf("kubernetes", "the default of %s must not contain |, the field separator", u.Name)
		}
	}
}
