package flow

import (
	"strconv"
	"strings"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/kubeconfig"
)

// UserInputs returns the service's user inputs in their display order
// (INPUTS_ORDER): the ONEAPP_K8S_* inputs the agent reads, with the spec's
// values as defaults, then the spec's extra inputs. Call it on a spec from
// DefaultSpec or ParseSpec.
//
// ONEAPP_K8S_VERSION is not one of them: the image carries one Kubernetes
// release (kubeadm, kubelet, preloaded images) and the appliance build picks
// it; the agent still reads the key from older templates and fails early on
// a mismatch (DECISIONS.md, issue 8 §7).
func UserInputs(spec Spec) []UserInput {
	k := spec.Kubernetes
	tainted := "NO"
	if spec.TaintedMaster() {
		tainted = "YES"
	}
	in := []UserInput{
		{Name: vmcontext.KeyCNI, Type: "list", Description: "CNI plugin", Params: strings.Join(vmcontext.CNIPlugins, ","), Default: k.CNI},
		{Name: vmcontext.KeyPodsNetwork, Type: "text", Description: "Pod network CIDR", Default: k.PodsNetwork},
		{Name: vmcontext.KeyServicesNet, Type: "text", Description: "Service network CIDR", Default: k.ServicesNetwork},
		{Name: vmcontext.KeyPort, Type: "number", Description: "Kubernetes API server port", Default: strconv.Itoa(k.Port)},
		{Name: vmcontext.KeyAddress, Type: "text", Description: "NIC for Kubernetes traffic: a CIDR (e.g. 10.0.0.0/24) or a virtual network name (empty: the first NIC)", Default: k.Address},
		{Name: vmcontext.KeyNodeName, Type: "text", Description: "Node name prefix: nodes are named <prefix>-<VM ID> (empty: the role name, e.g. worker-42)"},
		{Name: vmcontext.KeyTaintedMaster, Type: "boolean", Description: "Keep the control-plane taint: no workloads on masters", Default: tainted},
		{Name: vmcontext.KeyTokenTTL, Type: "text", Description: "Join token lifetime, minted while a VM waits (Go duration, 15m to 24h)", Default: k.TokenTTL},
		{Name: vmcontext.KeyKubeconfigRecipients, Type: "text", Description: "More kubeconfig users, name:key[:maxrole] separated by ; (age1... or ssh-ed25519 keys; maxrole view by default or cluster-admin); the owner is always authorized as cluster-admin through ONEKUBE_AGE_RECIPIENT in their user template"},
		{Name: vmcontext.KeyControlPlaneEP, Type: "text", Description: "Control-plane endpoint host[:port]: a VIP or load balancer you run in front of the masters (empty: a local balancer on every node)", Default: k.ControlPlaneEndpoint},
		{Name: KeyAutoscale, Type: "text", Description: "Worker autoscaling bounds min:max, within the worker role min_vms and max_vms (empty: off)", Default: spec.Worker.Autoscale},
	}
	return append(in, spec.UserInputs...)
}

// builtinInput reports whether name is one of the inputs UserInputs always
// declares, so a spec cannot declare it twice.
func builtinInput(name string) bool {
	for _, u := range UserInputs(Spec{}) {
		if u.Name == name {
			return true
		}
	}
	return false
}

// networkInput is the service's network input string. A known network ID is
// written into field 5 so instantiating without networks_values still works
// ("id:" alone resolves to a null network: oneflow.md §3).
func networkInput(n Network) string {
	id := ""
	if n.ID != nil {
		id = strconv.Itoa(*n.ID)
	}
	return "M|network|" + n.Description + "||id:" + id
}

// KubeconfigUsers is the master role's CONTEXT value of
// ONEKUBE_KUBECONFIG_USERS, the authorized list the masters read
// (docs/kubeconfig.md): the owner under their OpenNebula name with the
// public key of their user template, as cluster-admin, then the
// KeyKubeconfigRecipients input, whose entries get view unless they say
// cluster-admin: an added user gets the least role unless the owner
// writes more. oned resolves $UNAME and $USER[...] from the VM's owner when it
// parses the CONTEXT (vm_var_syntax.y insert_single, get_user_attribute,
// release-7.4.0), at instantiate and again at every onevm updateconf; an
// owner without the attribute yields "name::cluster-admin", which the
// masters skip.
// CONTEXT is the one channel a VM of the service cannot write.
const KubeconfigUsers = "$UNAME:$USER[" + vmcontext.UserKeyAgeRecipient + "]:" + kubeconfig.RoleClusterAdmin + ";$" + vmcontext.KeyKubeconfigRecipients
