package access

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/OpenNebula/one/src/oca/go/src/goca/schemas/shared"
	"github.com/OpenNebula/one/src/oca/go/src/goca/schemas/vm"

	vmcontext "github.com/onekube/onekube/context"
)

// KeyControlPlaneEP is ONEAPP_K8S_CONTROL_PLANE_EP, host[:port] of a VIP
// or load balancer the user runs in front of the masters.
const KeyControlPlaneEP = vmcontext.KeyControlPlaneEP

// contextOf returns a VM's CONTEXT as oned holds it: written by oned at
// instantiate and changed only by its owner (onevm updateconf), never by
// a VM through OneGate. Everything the CLI trusts about a master comes
// from here or from oned's NIC list, not from USER_TEMPLATE.
func contextOf(v *vm.VM) vmcontext.Vars {
	out := vmcontext.Vars{}
	vec, err := v.Template.GetVector("CONTEXT")
	if err != nil {
		return out
	}
	for _, p := range vec.Pairs {
		out[p.Key()] = p.Value
	}
	return out
}

// Server is the API server URL the kubeconfig points at:
// ONEAPP_K8S_CONTROL_PLANE_EP when set; otherwise this master's own
// address, picked from its CONTEXT's NICs by the rule the agent uses for
// the advertise address (ONEAPP_K8S_ADDRESS), which is in the master's
// serving certificate. The default controlPlaneEndpoint (127.0.0.1:6444,
// each node's local balancer) is of no use from outside.
func Server(master *vm.VM) (string, error) {
	ctx := contextOf(master)
	port := vmcontext.DefaultPort
	if p := ctx.Get(vmcontext.KeyPort); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("master VM %d: %s %q is not a port", master.ID, vmcontext.KeyPort, p)
		}
		port = n
	}
	if ep := ctx.Get(KeyControlPlaneEP); ep != "" {
		host, p, err := splitEndpoint(ep, port)
		if err != nil {
			return "", fmt.Errorf("master VM %d: %s: %w", master.ID, KeyControlPlaneEP, err)
		}
		return "https://" + net.JoinHostPort(host, strconv.Itoa(p)), nil
	}
	sel, err := vmcontext.ParseAddressSelector(ctx.Get(vmcontext.KeyAddress))
	if err != nil {
		return "", fmt.Errorf("master VM %d: %s: %w", master.ID, vmcontext.KeyAddress, err)
	}
	nics := ctx.NICs()
	names := map[string]string{}
	for _, n := range master.Template.GetNICs() {
		mac, _ := n.Get(shared.MAC)
		network, _ := n.Get(shared.Network)
		names[strings.ToLower(mac)] = network
	}
	for i := range nics {
		nics[i].NetworkName = names[strings.ToLower(nics[i].MAC)]
	}
	_, addr, err := sel.Pick(nics)
	if err != nil {
		return "", fmt.Errorf("master VM %d: %w", master.ID, err)
	}
	return "https://" + net.JoinHostPort(addr.String(), strconv.Itoa(port)), nil
}

// splitEndpoint reads host[:port] with the rule the agent applies to
// ONEAPP_K8S_CONTROL_PLANE_EP (vmcontext.ParseControlPlaneEndpoint), so the
// CLI and the certificate's SANs agree on what the endpoint is.
func splitEndpoint(ep string, defPort int) (string, int, error) {
	hp, err := vmcontext.ParseControlPlaneEndpoint(ep, defPort)
	if err != nil {
		return "", 0, err
	}
	if hp == "" {
		return "", 0, fmt.Errorf("%q is not host[:port]", ep)
	}
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return "", 0, err
	}
	return host, n, nil
}
