package flow

import (
	"strconv"
	"strings"

	vmcontext "github.com/onekube/onekube/context"
)

// UserInputs returns the service's user inputs in their display order
// (INPUTS_ORDER): the ONEAPP_K8S_* inputs the agent reads, with the spec's
// values as defaults, then the spec's extra inputs. Call it on a spec from
// DefaultSpec or ParseSpec.
func UserInputs(spec Spec) []UserInput {
	k := spec.Kubernetes
	tainted := "NO"
	if spec.TaintedMaster() {
		tainted = "YES"
	}
	in := []UserInput{
		{Name: vmcontext.KeyVersion, Type: "text", Description: "Kubernetes version, e.g. v1.36.3 (empty: the version of the image's kubeadm)", Default: k.Version},
		{Name: vmcontext.KeyCNI, Type: "list", Description: "CNI plugin", Params: strings.Join(vmcontext.CNIPlugins, ","), Default: k.CNI},
		{Name: vmcontext.KeyPodsNetwork, Type: "text", Description: "Pod network CIDR", Default: k.PodsNetwork},
		{Name: vmcontext.KeyServicesNet, Type: "text", Description: "Service network CIDR", Default: k.ServicesNetwork},
		{Name: vmcontext.KeyPort, Type: "number", Description: "Kubernetes API server port", Default: strconv.Itoa(k.Port)},
		{Name: vmcontext.KeyAddress, Type: "text", Description: "API server advertise address: IP, CIDR or network name (empty: the first NIC's IP)", Default: k.Address},
		{Name: vmcontext.KeyNodeName, Type: "text", Description: "Node name (empty: the VM's hostname; leave empty with more than one VM)"},
		{Name: vmcontext.KeyTaintedMaster, Type: "boolean", Description: "Keep the control-plane taint: no workloads on masters", Default: tainted},
		{Name: vmcontext.KeyTokenTTL, Type: "text", Description: "Bootstrap token lifetime (Go duration, e.g. 24h)", Default: k.TokenTTL},
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
