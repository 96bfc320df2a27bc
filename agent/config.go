package agent

import (
	"net/netip"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// Config is what the agent takes from the VM context, resolved against
// this VM as OneGate describes it: the settings flow wrote into the
// template, the NIC and address for Kubernetes traffic, and the node name.
type Config struct {
	MasterRole string
	// Address is this node's address (advertise address, node-ip), on the
	// NIC ONEAPP_K8S_ADDRESS picked; NIC is that NIC's ETHn index.
	Address         netip.Addr
	NIC             int
	Port            int // API server port
	PodsNetwork     netip.Prefix
	ServicesNetwork netip.Prefix
	// NodeName is <prefix>-<VMID> (vmcontext.NodeName); the hostname is
	// made to agree with it.
	NodeName string
	// Version is the Kubernetes release the template asks for (an old
	// template's ONEAPP_K8S_VERSION); it must equal the image's kubeadm.
	// Empty: whatever the image carries.
	Version       string
	CNI           string
	TaintedMaster bool
	TokenTTL      time.Duration
	// IgnorePreflight are kubeadm preflight checks the operator chose to
	// ignore (ONEAPP_K8S_IGNORE_PREFLIGHT_ERRORS); nil for none.
	IgnorePreflight []string
	// Endpoint is the cluster's controlPlaneEndpoint, "host:port":
	// ONEAPP_K8S_CONTROL_PLANE_EP, or the local balancer
	// (vmcontext.LocalBalancer) when that is empty.
	Endpoint string
	// Selector is ONEAPP_K8S_ADDRESS, to find other masters' addresses on
	// their NICs as this VM's was found on its own.
	Selector vmcontext.AddressSelector
	// MasterVMID is the initializing master's VM ID as OneFlow wrote it
	// into a straight-deployment worker's context; nil when absent.
	MasterVMID *int
	// CertValidity is the control-plane leaf certificates' lifetime
	// (ONEAPP_K8S_CERT_VALIDITY); 0 keeps kubeadm's year.
	CertValidity time.Duration
}

// LocalBalancer reports whether the endpoint is every node's own balancer.
func (c *Config) LocalBalancer() bool { return c.Endpoint == vmcontext.LocalBalancer }

// Kind is what this VM does in the cluster, decided by discovery.
type Kind string

// Kinds of node.
const (
	// KindInit is the master role's lowest VM ID: it runs kubeadm init.
	KindInit Kind = "init"
	// KindControlPlane is any other master-role VM, and every master once
	// a cluster is published: it joins with kubeadm join --control-plane.
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
	// MasterHint is set when MasterIDs is the context's MasterVMID alone,
	// which discovery found in the master role.
	MasterHint bool
	// IdentityChecked: this run renamed the VM if needed (identity.go).
	IdentityChecked bool
	// RoleMasters is the master role as discovery's read of the service
	// listed it.
	RoleMasters []int
	// Masters are the other master VMs as discovery read them (masters
	// only): who published a cluster decides who initialises.
	Masters map[int]*onegate.VM
	// Self is this VM as OneGate described it at discovery (GET /vm): its
	// NICs and what it published before (a previous boot, another disk).
	Self *onegate.VM
	// KubeadmVersion is the image's kubeadm, `kubeadm version -o short`.
	KubeadmVersion string
	// Adopted is set when preflight found this VM's bootstrap already done
	// on this disk, with only the agent's record lost: nothing is run.
	Adopted bool
}

// Master is the join data a ready master published, validated.
type Master struct {
	VMID    int
	Address netip.Addr
	Port    int
	Hash    string // 64 lowercase hex
	Token   vmcontext.Secret
	// Endpoint is the controlPlaneEndpoint the master published, "" from
	// a master that published none (initialised without one).
	Endpoint string
	// CertificateKey decrypts the uploaded control-plane certificates
	// (a joining master only, from its grant).
	CertificateKey vmcontext.Secret
	// Others are the addresses of the other READY masters of the same
	// cluster (a worker's balancer seed).
	Others []netip.Addr
}
