package status

// Service is what status needs of a OneFlow service.
type Service struct {
	ID    int
	Name  string
	State int // ServiceStateName
	Roles []Role
}

// Role is one role of a service and the VMs OneFlow has created for it.
type Role struct {
	Name        string
	State       int // RoleStateName
	Cardinality int
	VMIDs       []int
}

// VM is oned's view of one VM and what onekube-agent published into its
// USER_TEMPLATE. It deliberately has no field for the join token.
type VM struct {
	ID       int
	Name     string
	State    string // STATE name: ACTIVE, POWEROFF, ...
	LCMState string // LCM_STATE name: RUNNING, BOOT_FAILURE, ...; LCM_INIT unless ACTIVE
	IP       string // the first NIC's address

	Phase    string // ONEGATE_K8S_PHASE
	Error    string // ONEGATE_K8S_ERROR, already redacted by the agent
	NodeName string // ONEGATE_K8S_NODE_NAME
	Ready    bool   // READY=YES (any case, as OneFlow compares it)
	// Master is ONEGATE_K8S_MASTER:ONEGATE_K8S_PORT once a master published.
	Master         string
	TokenPublished bool // ONEGATE_K8S_TOKEN is set; its value is never kept
	// CP is what a master published about the HA control plane (ha.go).
	CP ControlPlaneInfo
	// Living is what a master's serve published (living.go).
	Living Living
	// Upgrade is what the VM published about an upgrade (upgrade.go).
	Upgrade UpgradeInfo

	// ReadError is why oned could not be asked about this VM; the fields
	// above are then empty.
	ReadError string
}

// Agent phases onekube-agent publishes that end its run.
const (
	PhaseDone   = "done"
	PhaseFailed = "failed"
)
