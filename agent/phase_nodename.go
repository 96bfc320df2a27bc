package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// checkNodeName refuses to join under a name another VM of the service
// already published as ONEGATE_K8S_NODE_NAME. Names are <prefix>-<VMID>,
// unique by construction among agents of this release; this catches the
// rest (an older agent, a hand-set name, a sibling rewriting its keys)
// before kubeadm join lets this kubelet take over that VM's Node.
//
// It reads the service once, extended (GET /service?extended=true): one
// request, one OneFlow lookup and a vm.info per node on the server, where
// asking each VM (GET /vms/:id) would cost a OneFlow lookup per VM too.
// On 5.10 the plain document already carries every template. Nodes whose
// template is missing anyway are read one by one.
func checkNodeName(ctx context.Context, d Data) error {
	name, self := d.Config().NodeName, d.Node().VMID
	var svc *onegate.Service
	w := oneGateWaiter(d, "reading the service's node names")
	if err := w.run(ctx, func(ctx context.Context) error {
		var err error
		svc, err = d.OneGate().GetServiceExtended(ctx)
		return err
	}); err != nil {
		return err
	}
	var holders []int
	for _, r := range svc.Roles {
		for _, node := range r.Nodes {
			if node.VMID == self {
				continue
			}
			vm := node.VM
			if vm == nil {
				var err error
				if vm, err = d.OneGate().GetVMByID(ctx, node.VMID); err != nil {
					return fmt.Errorf("reading VM %d's node name: %w", node.VMID, err)
				}
			}
			if strings.TrimSpace(vm.UserTemplate[vmcontext.KeyPubNodeName]) == name {
				holders = append(holders, node.VMID)
			}
		}
	}
	if len(holders) == 0 {
		return nil
	}
	slices.Sort(holders)
	return fmt.Errorf("%w: VM %s published %s=%s; joining under it would take over that VM's Node. "+
		"Find out why VM %d uses this VM's name (an older agent, a hand-set value), fix it, and start onekube-bootstrap.service again",
		ErrNameTaken, idList(holders), vmcontext.KeyPubNodeName, name, holders[0])
}
