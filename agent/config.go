package agent

import (
	"net/netip"
	"time"

	vmcontext "github.com/onekube/onekube/context"
)

// Config is what the agent takes from the VM context, resolved: the
// settings flow wrote into the template plus this VM's own address.
type Config struct {
	MasterRole      string
	Address         netip.Addr // this node's address (advertise / node-ip)
	Port            int        // API server port
	PodsNetwork     netip.Prefix
	ServicesNetwork netip.Prefix
	NodeName        string
	// Version is the target Kubernetes release; empty means the version of
	// the kubeadm on PATH.
	Version       string
	CNI           string
	TaintedMaster bool
	TokenTTL      time.Duration
}

// Kind is what this VM does in the cluster, decided by discovery.
type Kind string

// Kinds of node.
const (
	// KindInit is the master role's lowest VM ID: it runs kubeadm init.
	KindInit Kind = "init"
	// KindControlPlane is any other master-role VM (HA, not yet supported).
	KindControlPlane Kind = "control-plane"
	// KindWorker is a VM of any other role.
	KindWorker Kind = "worker"
)

// Node is what discovery learned about this VM and its service.
type Node struct {
	VMID      int
	ServiceID int
	RoleName  string
	Kind      Kind
	// MasterIDs are the master role's VM IDs, lowest first.
	MasterIDs []int
}

// Master is the join data a ready master published, validated.
type Master struct {
	VMID    int
	Address netip.Addr
	Port    int
	Hash    string // 64 lowercase hex
	Token   vmcontext.Secret
}
