package flow

import (
	"strconv"
	"strings"

	vmcontext "github.com/onekube/onekube/context"
)

// RenderVMTemplate renders the OpenNebula VM template of role (RoleMaster or
// RoleWorker) in template syntax, for onetemplate create or
// one.template.allocate.
//
// CONTEXT passes every input as "$NAME" (OneFlow 6 needs that; 7 writes the
// same itself) and never sets REPORT_READY: one-context would report READY at
// boot, releasing the workers long before kubeadm init is done. The agent
// reports READY itself.
func RenderVMTemplate(spec Spec, role string) (string, error) {
	applyDefaults(&spec)
	r, err := spec.Role(role)
	if err != nil {
		return "", err
	}
	if err := specError(spec); err != nil {
		return "", err
	}
	inputs := UserInputs(spec)
	t := oneTemplate{
		pair("NAME", spec.TemplateName(role)),
		pair("DESCRIPTION", "Kubernetes "+role+" of the onekube cluster "+spec.Metadata.Name+" (kubeadm, OneFlow)"),
		pair("CPU", formatCPU(r.CPU)),
		pair("VCPU", strconv.Itoa(r.VCPU)),
		pair("MEMORY", strconv.Itoa(r.MemoryMB)),
		diskAttr(r.Disk),
		nicAttr(spec.Network),
		vector("GRAPHICS", pair("LISTEN", "0.0.0.0"), pair("TYPE", "VNC")),
		contextAttr(spec, inputs, role),
		userInputsAttr(inputs),
		pair("INPUTS_ORDER", inputsOrder(inputs)),
	}
	return t.text()
}

func diskAttr(d Disk) oneAttr {
	var as []oneAttr
	if d.ImageID != nil {
		as = append(as, pair("IMAGE_ID", strconv.Itoa(*d.ImageID)))
	} else {
		as = append(as, pair("IMAGE", d.Image))
		if d.ImageUname != "" {
			as = append(as, pair("IMAGE_UNAME", d.ImageUname))
		}
	}
	if d.SizeMB > 0 {
		as = append(as, pair("SIZE", strconv.Itoa(d.SizeMB)))
	}
	return vector("DISK", as...)
}

// nicAttr is the VM template's own NIC. OneFlow replaces it with the role's
// NIC ($Network); on its own the template uses the spec's network, or lets
// the scheduler pick one (NETWORK_MODE auto) rather than carry a placeholder.
func nicAttr(n Network) oneAttr {
	if n.ID != nil {
		return vector("NIC", pair("NAME", "NIC0"), pair("NETWORK_ID", strconv.Itoa(*n.ID)))
	}
	return vector("NIC", pair("NAME", "NIC0"), pair("NETWORK_MODE", "auto"))
}

// contextAttr is the VM template's CONTEXT. With a straight deployment it
// also references $ONEKUBE_MASTER_VM_ID, in every role's template: oned
// resolves it from the VM's own attributes, where 6.x's
// vm_template_contents puts "${master.vm.id}" as evaluated by OneFlow
// (contents6), for workers only. A master, or a VM made from this template
// without OneFlow, gets "": oned writes nothing for an attribute the VM
// lacks (insert_single, src/parsers/vm_var_syntax.y), and the agent reads
// "" as absent. Every role carries it because the marketplace appliance
// has one template, the master's, for both roles. In 7.x the role's
// template_contents CONTEXT sets the key itself and wins the deep merge.
func contextAttr(spec Spec, inputs []UserInput, role string) oneAttr {
	as := []oneAttr{
		pair("NETWORK", "YES"),
		pair("TOKEN", "YES"),
		pair("SSH_PUBLIC_KEY", "$USER[SSH_PUBLIC_KEY]"),
		pair(vmcontext.KeyContract, strconv.Itoa(vmcontext.ContractVersion)),
		pair(vmcontext.KeyServiceID, "$"+vmcontext.KeyServiceID),
		pair(vmcontext.KeyRoleName, "$"+vmcontext.KeyRoleName),
		pair(vmcontext.KeyMasterRole, "$"+vmcontext.KeyMasterRole),
	}
	if spec.Service.Deployment == "straight" {
		as = append(as, pair(vmcontext.KeyMasterVMID, "$"+vmcontext.KeyMasterVMID))
	}
	for _, u := range inputs {
		as = append(as, pair(u.Name, "$"+u.Name))
	}
	if role == RoleMaster {
		as = append(as, pair(vmcontext.KeyKubeconfigUsers, KubeconfigUsers))
		// From 6.x's vm_template_contents (contents6); 7.x's
		// template_contents CONTEXT sets it itself. Without OneFlow
		// oned writes "", which onekubed reads as absent.
		as = append(as, pair(vmcontext.KeyWorkerTemplate, "$"+vmcontext.KeyWorkerTemplate))
	}
	return vector("CONTEXT", as...)
}

func userInputsAttr(inputs []UserInput) oneAttr {
	as := make([]oneAttr, 0, len(inputs))
	for _, u := range inputs {
		as = append(as, pair(u.Name, u.String()))
	}
	return vector("USER_INPUTS", as...)
}

func inputsOrder(inputs []UserInput) string {
	names := make([]string, 0, len(inputs))
	for _, u := range inputs {
		names = append(names, u.Name)
	}
	return strings.Join(names, ",")
}
