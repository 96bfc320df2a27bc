package flow

import "fmt"

// APIVersion and Kind identify a cluster spec document. ParseSpec accepts
// these and, later, upgrades older apiVersions into the current Spec.
const (
	APIVersion = "onekube.io/v1alpha1"
	Kind       = "Cluster"
)

// Role names in the service template. The master role's name also reaches
// the agent as ONEAPP_ONEFLOW_MASTER_ROLE.
const (
	RoleMaster = "master"
	RoleWorker = "worker"
)

// Spec is the cluster spec (YAML, apiVersion onekube.io/v1alpha1, kind
// Cluster). Unset fields take the defaults of DefaultSpec; pointer fields
// distinguish "unset" from a meaningful zero (0 workers, VM template ID 0).
type Spec struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   Metadata   `json:"metadata"`
	Kubernetes Kubernetes `json:"kubernetes"`
	Network    Network    `json:"network"`
	Master     Role       `json:"master"`
	Worker     Role       `json:"worker"`
	// UserInputs are extra inputs, appended after the built-in ones; they
	// reach every VM's CONTEXT like the built-in ones.
	UserInputs []UserInput    `json:"userInputs,omitempty"`
	Service    ServiceOptions `json:"service"`
}

// Metadata names the cluster; the name becomes the service template's name
// and prefixes the VM template names.
type Metadata struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Kubernetes holds the defaults of the ONEAPP_K8S_* user inputs.
type Kubernetes struct {
	// Version is refused when set: the image carries one Kubernetes
	// release and its build picks it. The field stays so that an older
	// spec gets that reason rather than "unknown field".
	Version         string `json:"version,omitempty"`
	Port            int    `json:"port,omitempty"`
	PodsNetwork     string `json:"podsNetwork,omitempty"`
	ServicesNetwork string `json:"servicesNetwork,omitempty"`
	CNI             string `json:"cni,omitempty"`
	// Address selects each VM's NIC for Kubernetes traffic (advertise
	// address, node IP): a CIDR or a virtual network name; empty means the
	// first NIC. A bare IP is refused: it cannot be every VM's.
	Address  string `json:"address,omitempty"`
	TokenTTL string `json:"tokenTTL,omitempty"`
	// ControlPlaneEndpoint is ONEAPP_K8S_CONTROL_PLANE_EP's default:
	// host[:port] of a VIP or load balancer the user runs in front of the
	// masters; empty gives every node a local balancer (architecture §3).
	ControlPlaneEndpoint string `json:"controlPlaneEndpoint,omitempty"`
	// TaintedMaster keeps the control-plane taint; unset means "yes when
	// there are workers", so a master-only cluster can run workloads.
	TaintedMaster *bool `json:"taintedMaster,omitempty"`
}

// Network is the service's network input that every role's NIC uses.
type Network struct {
	// Name is the OneFlow network input name, referenced as NETWORK_ID
	// "$Name" by the roles' NICs. Default "Private".
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// ID is the default virtual network ID; unset means the user picks one
	// at instantiate (networks_values).
	ID *int `json:"id,omitempty"`
	// CIDR is the nodes' address range; only used to check it does not
	// overlap the pod and service networks.
	CIDR string `json:"cidr,omitempty"`
}

// Role describes one OneFlow role and its VM template.
type Role struct {
	Count *int `json:"count,omitempty"`
	// Min and Max are the role's elasticity bounds (min_vms, max_vms).
	// Unset: see Role.MinVMs and Role.MaxVMs.
	Min *int `json:"min,omitempty"`
	Max *int `json:"max,omitempty"`
	// TemplateID is an existing VM template; unset means create registers
	// one (named TemplateName, default "<cluster>-<role>") and render
	// writes -1.
	TemplateID   *int    `json:"templateID,omitempty"`
	TemplateName string  `json:"templateName,omitempty"`
	CPU          float64 `json:"cpu,omitempty"`
	VCPU         int     `json:"vcpu,omitempty"`
	MemoryMB     int     `json:"memoryMB,omitempty"`
	Disk         Disk    `json:"disk"`
	// Cooldown is the role's OneFlow cooldown in seconds: how long the
	// service stays in COOLDOWN, refusing every scale, after one.
	// Default DefaultCooldown.
	Cooldown *int `json:"cooldown,omitempty"`
	// Autoscale (workers only) is KeyAutoscale's default, "min:max" or
	// empty for off; when set it also gives min_vms and max_vms.
	Autoscale string `json:"autoscale,omitempty"`
	// AntiAffinity places the role's VMs on different hosts through a VM
	// group (vmgroup.go). Unset: see Role.Spread.
	AntiAffinity *bool `json:"antiAffinity,omitempty"`
	// ShutdownAction overrides the service's for this role.
	ShutdownAction     string             `json:"shutdownAction,omitempty"`
	ElasticityPolicies []ElasticityPolicy `json:"elasticityPolicies,omitempty"`
	ScheduledPolicies  []ScheduledPolicy  `json:"scheduledPolicies,omitempty"`
}

// Disk is the role's boot disk: an image by name (and owner) or by ID.
type Disk struct {
	Image      string `json:"image,omitempty"`
	ImageUname string `json:"imageUname,omitempty"`
	ImageID    *int   `json:"imageID,omitempty"`
	// SizeMB resizes the disk; 0 keeps the image's size.
	SizeMB int `json:"sizeMB,omitempty"`
}

// ElasticityPolicy scales a role when Expression holds (OneFlow syntax,
// e.g. "CPU > 80") for PeriodNumber checks Period seconds apart.
type ElasticityPolicy struct {
	Type          string `json:"type"`
	Adjust        int    `json:"adjust"`
	MinAdjustStep *int   `json:"minAdjustStep,omitempty"`
	Expression    string `json:"expression"`
	PeriodNumber  *int   `json:"periodNumber,omitempty"`
	Period        *int   `json:"period,omitempty"`
	Cooldown      *int   `json:"cooldown,omitempty"`
}

// ScheduledPolicy scales a role at StartTime or on a cron Recurrence.
type ScheduledPolicy struct {
	Type          string `json:"type"`
	Adjust        int    `json:"adjust"`
	MinAdjustStep *int   `json:"minAdjustStep,omitempty"`
	StartTime     string `json:"startTime,omitempty"`
	Recurrence    string `json:"recurrence,omitempty"`
}

// ServiceOptions are service-level OneFlow settings.
type ServiceOptions struct {
	// Deployment is "straight" (workers after the master is READY) or
	// "none" (all roles at once).
	Deployment        string `json:"deployment,omitempty"`
	ReadyStatusGate   *bool  `json:"readyStatusGate,omitempty"`
	ShutdownAction    string `json:"shutdownAction,omitempty"`
	AutomaticDeletion bool   `json:"automaticDeletion,omitempty"`
	OnHold            bool   `json:"onHold,omitempty"`
}

// Role returns the role named name (RoleMaster or RoleWorker).
func (s *Spec) Role(name string) (*Role, error) {
	switch name {
	case RoleMaster:
		return &s.Master, nil
	case RoleWorker:
		return &s.Worker, nil
	}
	return nil, fmt.Errorf("%w %q (want %s or %s)", ErrRole, name, RoleMaster, RoleWorker)
}
