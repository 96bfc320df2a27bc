package flow

import vmcontext "github.com/onekube/onekube/context"

// Defaults that context/keys.go does not own: sizes, names, service shape.
const (
	DefaultName        = "kubernetes"
	DefaultDescription = "Kubernetes cluster (kubeadm), rendered by onekube-flow"
	DefaultNetworkName = "Private"
	DefaultNetworkDesc = "Kubernetes nodes network"
	DefaultImage       = "onekube"
	DefaultDeployment  = "straight"
	DefaultMasters     = 1
	DefaultWorkers     = 2
	// DefaultWorkersMax is the worker role's max_vms unless the count is
	// already higher.
	DefaultWorkersMax = 10
	// DefaultCooldown is every role's cooldown, in seconds, instead of
	// OneFlow's 300 (:default_cooldown:, oneflow-server.conf). OneFlow
	// refuses any scale of the service while it is in COOLDOWN
	// (Service#can_scale?), and onekube's own steps (an upgrade's surge,
	// a remediation's replacement, an autoscaler step) already wait for
	// the new VM to be READY, which takes minutes; so the cooldown only
	// adds to each step. 30 s keeps one short pause in which the service
	// settles and a controller re-reads it before the next step (the
	// scaler of another role, a second controller), and stays under
	// OneFlow's 90 s elasticity loop, so it never paces hand-written
	// policies more than the loop does.
	DefaultCooldown = 30
	// UnsetTemplateID is what render writes for a role without a VM
	// template: OneFlow accepts it, deploy fails loudly instead of booting
	// whatever template 0 happens to be.
	UnsetTemplateID = -1
)

// Role sizes. The legacy appliance gave the master 1.5 GB, below kubeadm's
// control-plane preflight minimum (1700 MB), so the master gets 2 GB.
var (
	defaultMasterSize = Role{CPU: 1, VCPU: 2, MemoryMB: 2048}
	defaultWorkerSize = Role{CPU: 2, VCPU: 6, MemoryMB: 6144}
)

// DefaultSpec is the built-in cluster: one master, two workers (1 to 10),
// flannel, the legacy appliance's networks and port.
func DefaultSpec() Spec {
	s := Spec{APIVersion: APIVersion, Kind: Kind}
	applyDefaults(&s)
	return s
}

// WithDefaults returns s with every unset field filled in, as ParseSpec and
// DefaultSpec return it. The elasticity bounds stay derived (MinVMs).
func (s Spec) WithDefaults() Spec {
	applyDefaults(&s)
	return s
}

// applyDefaults fills every unset field; it is idempotent and the only place
// defaults are decided (the derived elasticity bounds aside, see MinVMs).
func applyDefaults(s *Spec) {
	if s.Metadata.Name == "" {
		s.Metadata.Name = DefaultName
	}
	if s.Metadata.Description == "" {
		s.Metadata.Description = DefaultDescription
	}
	k := &s.Kubernetes
	if k.Port == 0 {
		k.Port = vmcontext.DefaultPort
	}
	if k.PodsNetwork == "" {
		k.PodsNetwork = vmcontext.DefaultPodsNetwork
	}
	if k.ServicesNetwork == "" {
		k.ServicesNetwork = vmcontext.DefaultServicesNet
	}
	if k.CNI == "" {
		k.CNI = vmcontext.DefaultCNI
	}
	if k.TokenTTL == "" {
		k.TokenTTL = vmcontext.DefaultTokenTTL
	}
	if s.Network.Name == "" {
		s.Network.Name = DefaultNetworkName
	}
	if s.Network.Description == "" {
		s.Network.Description = DefaultNetworkDesc
	}
	roleDefaults(&s.Master, DefaultMasters, defaultMasterSize)
	roleDefaults(&s.Worker, DefaultWorkers, defaultWorkerSize)
	if s.Service.Deployment == "" {
		s.Service.Deployment = DefaultDeployment
	}
	if s.Service.ReadyStatusGate == nil {
		s.Service.ReadyStatusGate = ptr(true)
	}
}

func roleDefaults(r *Role, count int, size Role) {
	if r.Count == nil {
		r.Count = ptr(count)
	}
	if r.Cooldown == nil {
		r.Cooldown = ptr(DefaultCooldown)
	}
	if r.CPU == 0 {
		r.CPU = size.CPU
	}
	if r.VCPU == 0 {
		r.VCPU = size.VCPU
	}
	if r.MemoryMB == 0 {
		r.MemoryMB = size.MemoryMB
	}
	if r.Disk.Image == "" && r.Disk.ImageID == nil {
		r.Disk.Image = DefaultImage
	}
}

// TemplateName is the name role's VM template is registered under: the
// role's templateName, else "<cluster name>-<role>". It is derived, not
// defaulted, so renaming the cluster renames its templates.
func (s Spec) TemplateName(role string) string {
	r, err := s.Role(role)
	if err == nil && r.TemplateName != "" {
		return r.TemplateName
	}
	return s.Metadata.Name + "-" + role
}

// count returns the role's cardinality (0 when unset, before defaults).
func (r Role) count() int {
	if r.Count == nil {
		return 0
	}
	return *r.Count
}

// MinVMs is the role's min_vms: Min, else the count for the master (masters
// are not scaled by OneFlow: min = max = count keeps their number odd,
// refusing any OneGate cardinality change that would break it,
// VMRole#update, release-7.4.0), the Autoscale minimum for workers that
// have one, and 1 for other workers (0 if the count is 0).
//
// OneFlow keeps a role at min_vms by itself: its elasticity loop scales a
// role whose cardinality fell below it (a VM reached DONE) back up, with
// cooldown 0 (VMRole#scale? "Implicit rule", ServiceAutoScaler,
// release-7.4.0; Role#scale? in 6.10.5).
func (r Role) MinVMs(role string) int {
	switch {
	case r.Min != nil:
		return *r.Min
	case role == RoleMaster:
		return r.count()
	}
	if lo, _, on, err := ParseAutoscale(r.Autoscale); on && err == nil {
		return lo
	}
	return min(1, r.count())
}

// MaxVMs is the role's max_vms: Max, else the count for the master, the
// Autoscale maximum for workers that have one, and the larger of
// DefaultWorkersMax and the count for other workers.
func (r Role) MaxVMs(role string) int {
	switch {
	case r.Max != nil:
		return *r.Max
	case role == RoleMaster:
		return r.count()
	}
	if _, hi, on, err := ParseAutoscale(r.Autoscale); on && err == nil {
		return hi
	}
	return max(DefaultWorkersMax, r.count())
}

// Spread reports whether role's VMs go on different hosts: AntiAffinity,
// else yes for more than one master (one host failure must not take etcd
// quorum; a single master has no quorum to keep and needs no VM group) and
// no for workers. Derived, not defaulted, so --masters 3 turns it on.
func (r Role) Spread(role string) bool {
	if r.AntiAffinity != nil {
		return *r.AntiAffinity
	}
	return role == RoleMaster && r.count() > 1
}

// TaintedMaster reports the default of ONEAPP_K8S_TAINTED_MASTER: yes
// when there are workers or autoscaling may add some.
func (s Spec) TaintedMaster() bool {
	if s.Kubernetes.TaintedMaster != nil {
		return *s.Kubernetes.TaintedMaster
	}
	if _, hi, on, err := ParseAutoscale(s.Worker.Autoscale); on && err == nil && hi > 0 {
		// Workers to come (scale from zero): an untainted master would
		// take the pods that should raise the worker role.
		return true
	}
	return s.Worker.count() > 0
}

func ptr[T any](v T) *T { return &v }
