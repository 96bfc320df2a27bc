// Package context reads an OpenNebula VM's contextualization: the context.sh
// variables, the OneGate credentials, and the ONEAPP_K8S_* settings that
// onekube-flow writes into templates and onekube-agent reads in the VM.
//
// The package name matches its folder and so clashes with the standard
// library's context; every importer uses the fixed alias vmcontext.
package context

// ContractVersion is the version of the template-to-agent contract below. flow
// writes it into every role's CONTEXT as KeyContract; an agent refuses a VM
// whose contract is newer than the one it understands, instead of guessing.
const ContractVersion = 1

// Context variables written by oned (see shared/reference/onegate.md §2).
const (
	KeyVMID            = "VMID"
	KeyOneGateEndpoint = "ONEGATE_ENDPOINT"
	KeyOneGateToken    = "ONEGATE_TOKEN" // optional: token inline instead of token.txt
	KeyTokenTxt        = "TOKENTXT"      // the token as one-context exports it in one_env
	KeyServiceID       = "SERVICE_ID"
	KeyRoleName        = "ROLE_NAME"
)

// Inputs: user inputs that flow declares and passes into CONTEXT as "$NAME",
// and that the agent reads. Names follow the legacy kubeadm appliance where it
// had one, so existing templates keep working.
const (
	KeyContract      = "ONEKUBE_CONTRACT_VERSION"
	KeyMasterRole    = "ONEAPP_ONEFLOW_MASTER_ROLE" // default "master"
	KeyAddress       = "ONEAPP_K8S_ADDRESS"         // IP, CIDR or network name; empty: ETH0_IP
	KeyPort          = "ONEAPP_K8S_PORT"            // API server port, default 6443
	KeyPodsNetwork   = "ONEAPP_K8S_PODS_NETWORK"    // default 10.244.0.0/16
	KeyServicesNet   = "ONEAPP_K8S_SERVICES_NETWORK"
	KeyNodeName      = "ONEAPP_K8S_NODENAME" // empty: the VM's hostname
	KeyVersion       = "ONEAPP_K8S_VERSION"  // empty: the version of the image's kubeadm
	KeyCNI           = "ONEAPP_K8S_CNI_PLUGIN"
	KeyTaintedMaster = "ONEAPP_K8S_TAINTED_MASTER" // YES: keep the control-plane taint
	KeyTokenTTL      = "ONEAPP_K8S_TOKEN_TTL"      // bootstrap token lifetime, Go duration
)

// Published: keys the agent writes into its own VM's USER_TEMPLATE through
// OneGate. The first four are what the legacy appliance published, with the
// same value formats (MASTER is a bare IP, HASH is 64 hex without "sha256:").
const (
	KeyPubMaster   = "ONEGATE_K8S_MASTER"
	KeyPubPort     = "ONEGATE_K8S_PORT"
	KeyPubToken    = "ONEGATE_K8S_TOKEN"
	KeyPubHash     = "ONEGATE_K8S_HASH"
	KeyPubNodeName = "ONEGATE_K8S_NODE_NAME"
	KeyPubPhase    = "ONEGATE_K8S_PHASE"
	KeyPubError    = "ONEGATE_K8S_ERROR"
	KeyReady       = "READY" // "YES" once this VM's part is done; OneFlow gates on it
)

// Defaults for the inputs above; flow renders them into user-input strings and
// the agent applies them when a variable is empty.
const (
	DefaultMasterRole  = "master"
	DefaultPort        = 6443
	DefaultPodsNetwork = "10.244.0.0/16"
	DefaultServicesNet = "10.96.0.0/12"
	DefaultCNI         = "flannel"
	DefaultTokenTTL    = "24h"
)

// CNIPlugins lists the CNI choices the appliance carries manifests for.
var CNIPlugins = []string{"flannel", "calico", "none"}
