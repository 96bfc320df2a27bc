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
	KeyAddress       = "ONEAPP_K8S_ADDRESS"         // NIC selector: a CIDR or a network name; empty: the first NIC
	KeyPort          = "ONEAPP_K8S_PORT"            // API server port, default 6443
	KeyPodsNetwork   = "ONEAPP_K8S_PODS_NETWORK"    // default 10.244.0.0/16
	KeyServicesNet   = "ONEAPP_K8S_SERVICES_NETWORK"
	KeyNodeName      = "ONEAPP_K8S_NODENAME" // node name prefix: <prefix>-<VMID>; empty: from ROLE_NAME
	KeyVersion       = "ONEAPP_K8S_VERSION"  // must equal the image's kubeadm version when set
	KeyCNI           = "ONEAPP_K8S_CNI_PLUGIN"
	KeyTaintedMaster = "ONEAPP_K8S_TAINTED_MASTER" // YES: keep the control-plane taint
	KeyTokenTTL      = "ONEAPP_K8S_TOKEN_TTL"      // bootstrap token lifetime, Go duration
	// KeyIgnorePreflight lists kubeadm preflight checks to ignore, comma
	// separated. flow does not offer it as a user input: it is an operator's
	// escape hatch (a VM with one vCPU, a cgroup v1 host) set in the VM
	// template's CONTEXT, never a default.
	KeyIgnorePreflight = "ONEAPP_K8S_IGNORE_PREFLIGHT_ERRORS"
	// KeyOneGateCA is a PEM bundle (raw or base64) of the CA that signs an
	// https ONEGATE_ENDPOINT's certificate, for a OneGate behind a private
	// CA. Like KeyIgnorePreflight it is set in the VM template's CONTEXT
	// by the operator, not offered as a user input.
	KeyOneGateCA = "ONEKUBE_ONEGATE_CA"
)

// HA control planes (issue 11, docs/architecture.md §3).
const (
	// KeyControlPlaneEP is the stable control-plane endpoint, host[:port]
	// (OneKE's name): a VIP or load balancer the user runs in front of the
	// masters. Empty: every node's local balancer (LocalBalancer).
	KeyControlPlaneEP = "ONEAPP_K8S_CONTROL_PLANE_EP"
	// KeyMasterVMID is the initializing master's VM ID, which OneFlow
	// writes into a worker's CONTEXT at creation from "${master.vm.id}"
	// (straight deployment only: the parent role must exist; see
	// shared/reference/day2-opennebula.md §4). With it a worker polls that
	// VM from its first request instead of reading the service document,
	// whose size grows with the cluster. Empty: discover through the service.
	KeyMasterVMID = "ONEKUBE_MASTER_VM_ID"
	// KeyPubETA is a master's estimate, RFC 3339 UTC, of when it will
	// publish its join data: workers poll rarely before it and closely
	// around it (agent/pace.go). Readers ignore it once the VM is READY.
	KeyPubETA = "ONEGATE_K8S_ETA"
	// KeyPubKind is what a master did: "init" (ran kubeadm init) or
	// "control-plane" (joined with kubeadm join --control-plane).
	KeyPubKind = "ONEGATE_K8S_KIND"
	// KeyPubEndpoint is the cluster's controlPlaneEndpoint, as every master
	// rendered it.
	KeyPubEndpoint = "ONEGATE_K8S_ENDPOINT"
	// KeyPubEtcd is the etcd member list as the acting master last saw it:
	// space-separated "<state>@<peer IP>", state one of voter, learner,
	// unstarted, unhealthy.
	KeyPubEtcd = "ONEGATE_K8S_ETCD"
	// KeyPubEtcdError is the acting master's refusal to remove an etcd
	// member (quorum) or its last failure managing members; absent when fine.
	KeyPubEtcdError = "ONEGATE_K8S_ETCD_ERROR"
	// KeyPubRecipient is a joining master's age X25519 recipient: the
	// acting master encrypts the certificate key to it. It is a public
	// key; the private half stays 0600 on the joining master's disk.
	KeyPubRecipient = "ONEGATE_K8S_CP_RECIPIENT"
	// KeyPubCertKey is the acting master's grant to one joining master:
	// "<vmid>:<recipient>:<expires unix>:<age ciphertext, base64>". Only
	// while that master joins; erased when it is READY.
	KeyPubCertKey = "ONEGATE_K8S_CERT_KEY"
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
	// KeyPubServe is a master's serve mode: "acting" on the one master that
	// holds the serve lease, "standby" on the others.
	KeyPubServe = "ONEGATE_K8S_SERVE"
	// KeyPubExposure is a master's finding, probed on its own template
	// once per bootstrap, of what OneGate lets any VM of the service do:
	// "restricted-bypass=<yes|no|unknown> update_by_id=<yes|no|unknown>"
	// (onegate.Exposure, docs/trust.md).
	KeyPubExposure = "ONEGATE_K8S_EXPOSURE"
)

// Published by serve for the living cluster (issue 12): the join token's
// expiry beside the token every master mirrors, and the acting master's
// report of a clean-up it refused or failed (an etcd member whose removal
// would break quorum), erased once resolved.
const (
	// KeyPubTokenExpires is the expiry of ONEGATE_K8S_TOKEN, RFC 3339 in
	// UTC. A worker never starts a join with a token that expires within
	// its safety margin.
	KeyPubTokenExpires = "ONEGATE_K8S_TOKEN_EXPIRES"
	// KeyPubServeError is the acting master's loud refusal or failure of a
	// clean-up step, for `onekube-flow status` and the operator.
	KeyPubServeError = "ONEGATE_K8S_SERVE_ERROR"
	// KeyPubWaiting lists, space separated, the VMs of the service that
	// wait to join (no Node yet), as the acting master sees them.
	KeyPubWaiting = "ONEGATE_K8S_WAITING"
	// KeyPubGivenUp lists, space separated, the VMs the acting master no
	// longer counts as waiting: they waited to join longer than serve's
	// wait limit, and no join token is kept for them.
	KeyPubGivenUp = "ONEGATE_K8S_GIVEN_UP"
	// KeyPubNodesWithoutVM lists, space separated, the Nodes whose VM is
	// gone and that the acting master deletes after its grace period.
	KeyPubNodesWithoutVM = "ONEGATE_K8S_NODES_WITHOUT_VM"
)

// Certificate renewal (issue 21, docs/certificates.md): each master's serve
// publishes on its own VM the expiry of its earliest control-plane leaf
// certificate and its last renewal, "expires=<RFC 3339> renewed=<RFC
// 3339|never>", and why it could not renew, erased once it can.
const (
	KeyPubCerts      = "ONEGATE_K8S_CERTS"
	KeyPubCertsError = "ONEGATE_K8S_CERTS_ERROR"
	// KeyCertRenewBefore is how long before expiry a master renews (a Go
	// duration, default 720h), read by onekubed serve from its CONTEXT.
	KeyCertRenewBefore = "ONEAPP_K8S_CERT_RENEW_BEFORE"
	// KeyCertValidity is the lifetime kubeadm gives the control-plane leaf
	// certificates (ClusterConfiguration.certificateValidityPeriod, a Go
	// duration; empty: kubeadm's year). Read by the initialising master;
	// joining masters take it from the cluster's kubeadm-config.
	KeyCertValidity = "ONEAPP_K8S_CERT_VALIDITY"
)

// Remediation (issue 22, docs/onekubed.md "Remediation"): the acting
// master's serve replaces broken nodes unless the owner switched it off in
// the masters' CONTEXT ("off" or "on", default on), and publishes on its
// own VM one bounded line of what it did or why it stopped.
const (
	KeyRemediation    = "ONEAPP_K8S_REMEDIATION"
	KeyPubRemediation = "ONEGATE_K8S_REMEDIATION"
)

// Defaults for the inputs above; flow renders them into user-input strings and
// the agent applies them when a variable is empty.
const (
	DefaultMasterRole  = "master"
	DefaultPort        = 6443
	DefaultPodsNetwork = "10.244.0.0/16"
	DefaultServicesNet = "10.96.0.0/12"
	DefaultCNI         = "flannel"
	DefaultTokenTTL    = "1h"
)

// CNIPlugins lists the CNI choices the appliance carries manifests for.
var CNIPlugins = []string{"flannel", "calico", "none"}

// Kubeconfig access (issue 13, docs/kubeconfig.md). Who may get a
// kubeconfig is said only through channels a VM cannot write: the masters'
// CONTEXT (set at instantiate, or by the owner with onevm updateconf) and
// the owner's OpenNebula user template. Requests and answers travel through
// a master's USER_TEMPLATE, which every VM of the service can read and
// write, so a request only picks among the authorized users and an answer
// is sealed with age to the one it names.
const (
	// KeyKubeconfigUsers (CONTEXT of the master role) lists the authorized
	// users as name:recipient entries separated by ';'. flow composes it
	// at instantiate from the owner ($UNAME and $USER[ONEKUBE_AGE_RECIPIENT])
	// and the KeyKubeconfigRecipients input.
	KeyKubeconfigUsers = "ONEKUBE_KUBECONFIG_USERS"
	// KeyKubeconfigRecipients is the user input for more users, in the
	// same name:recipient;... form.
	KeyKubeconfigRecipients = "ONEKUBE_KUBECONFIG_RECIPIENTS"
	// UserKeyAgeRecipient is the attribute of an OpenNebula user's own
	// template that holds their public age recipient; onekube-flow stores
	// it there, and new clusters authorize it through $USER[...].
	UserKeyAgeRecipient = "ONEKUBE_AGE_RECIPIENT"
	// KeyPubKubeconfigRequest and KeyPubKubeconfigAnswer prefix a request
	// (written by onekube-flow) and its answer (written by the master) in
	// the master's USER_TEMPLATE; the request ID follows.
	KeyPubKubeconfigRequest = "ONEKUBE_KUBECONFIG_REQ_"
	KeyPubKubeconfigAnswer  = "ONEKUBE_KUBECONFIG_ANS_"
)

// Upgrade progress (docs/upgrades.md), display only: each node's executor
// publishes its own step ("<version> <step>") and error; the acting master
// publishes the rollout's line and why it stopped. Nothing acts on them:
// the plan and the grants live in the ConfigMap kube-system/onekube-upgrade.
const (
	KeyPubNodeUpgrade      = "ONEGATE_K8S_NODE_UPGRADE"
	KeyPubNodeUpgradeError = "ONEGATE_K8S_NODE_UPGRADE_ERROR"
	KeyPubUpgrade          = "ONEGATE_K8S_UPGRADE"
	KeyPubUpgradeError     = "ONEGATE_K8S_UPGRADE_ERROR"
)

// Autoscaling of the worker role (issue 22 item 3, docs/onekubed.md): the
// acting master's serve reads "min:max" from its own CONTEXT, which only
// the owner sets; empty leaves autoscaling off.
const (
	KeyAutoscale = "ONEAPP_K8S_AUTOSCALE"
	// KeyPubAutoscale: the acting master's autoscaler, one bounded line
	// on its own VM for `onekube-flow status`.
	KeyPubAutoscale   = "ONEGATE_K8S_AUTOSCALE"
	DefaultWorkerRole = "worker"
	// KeyWorkerTemplate (CONTEXT of the master role) is the worker role's
	// VM size as flow rendered it, "vcpu=N memory=MB [labels=..]
	// [taints=..]": the autoscaler's template of a new worker when the
	// role has no Node to copy (scale from zero). CONTEXT, because no VM
	// can write it: OneGate's PUT /vm and PUT /vms/:id reach only
	// USER_TEMPLATE (vm.update), and its action list has no updateconf
	// (src/onegate/onegate-server.rb, release-7.4.0 and HEAD).
	KeyWorkerTemplate = "ONEKUBE_WORKER_TEMPLATE"
)
