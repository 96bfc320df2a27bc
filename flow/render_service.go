package flow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	vmcontext "github.com/onekube/onekube/context"
)

// RenderService renders the OneFlow service template for spec in the data
// model of OneFlow v (6 or 7), as indented JSON ending in a newline. The
// output depends only on its input. A spec with errors (CheckSpec) is
// refused.
func RenderService(spec Spec, v OneFlowVersion) ([]byte, error) {
	if err := v.check(); err != nil {
		return nil, err
	}
	applyDefaults(&spec)
	if err := specError(spec); err != nil {
		return nil, err
	}
	var doc any
	switch v {
	case Version6:
		doc = service6(spec)
	default:
		doc = service7(spec)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encoding the service template: %w", err)
	}
	return b.Bytes(), nil
}

// specError folds CheckSpec's errors (not its warnings) into one error.
func specError(spec Spec) error {
	var msgs []string
	for _, p := range CheckSpec(spec) {
		if p.Severity == Error {
			msgs = append(msgs, p.Path+": "+p.Message)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrSpec, strings.Join(msgs, "; "))
}

// serviceHeader renders the fields both OneFlow versions share.
func serviceHeader(s Spec) ServiceHeader {
	return ServiceHeader{
		Name:              s.Metadata.Name,
		Description:       s.Metadata.Description,
		Deployment:        s.Service.Deployment,
		ReadyStatusGate:   *s.Service.ReadyStatusGate,
		ShutdownAction:    s.Service.ShutdownAction,
		AutomaticDeletion: s.Service.AutomaticDeletion,
		OnHold:            s.Service.OnHold,
		Networks:          map[string]string{s.Network.Name: networkInput(s.Network)},
		NetworksValues:    networksValues(s.Network),
	}
}

func service7(s Spec) ServiceTemplate7 {
	st := ServiceTemplate7{ServiceHeader: serviceHeader(s), UserInputs: inputMap(s)}
	for _, name := range []string{RoleMaster, RoleWorker} {
		r, _ := s.Role(name)
		// The server deep-merges CONTEXT and adds the user inputs
		// itself; these are not user inputs.
		ctx := map[string]string{
			vmcontext.KeyContract:   strconv.Itoa(vmcontext.ContractVersion),
			vmcontext.KeyMasterRole: RoleMaster,
		}
		if name == RoleMaster {
			// Here too, so a master made from another VM template
			// (the marketplace appliance's) still has the list.
			ctx[vmcontext.KeyKubeconfigUsers] = KubeconfigUsers
			ctx[vmcontext.KeyWorkerTemplate] = workerTemplate(s)
		}
		if masterRef(s, name) {
			// CONTEXT keys merge over the VM template's, so this value
			// wins over its "$ONEKUBE_MASTER_VM_ID" (vmtemplate.go).
			ctx[vmcontext.KeyMasterVMID] = masterVMIDExpr
		}
		group, _ := vmGroupRef(s, name)
		st.Roles = append(st.Roles, Role7{
			Name:               name,
			Type:               "vm",
			TemplateID:         templateID(*r),
			Cardinality:        r.count(),
			MinVMs:             ptr(r.MinVMs(name)),
			MaxVMs:             ptr(r.MaxVMs(name)),
			Cooldown:           r.Cooldown,
			Parents:            parents(name),
			ShutdownAction:     r.ShutdownAction,
			ElasticityPolicies: elasticityJSON(r.ElasticityPolicies),
			ScheduledPolicies:  scheduledJSON(r.ScheduledPolicies),
			TemplateContents: TemplateContents7{
				CPU:     formatCPU(r.CPU),
				VCPU:    strconv.Itoa(r.VCPU),
				Memory:  strconv.Itoa(r.MemoryMB),
				NIC:     []NIC{roleNIC(s.Network)},
				Context: ctx,
				VMGroup: group,
			},
		})
	}
	return st
}

func service6(s Spec) ServiceTemplate6 {
	st := ServiceTemplate6{ServiceHeader: serviceHeader(s), CustomAttrs: inputMap(s)}
	for _, name := range []string{RoleMaster, RoleWorker} {
		r, _ := s.Role(name)
		st.Roles = append(st.Roles, Role6{
			Name:               name,
			VMTemplate:         templateID(*r),
			Cardinality:        r.count(),
			MinVMs:             ptr(r.MinVMs(name)),
			MaxVMs:             ptr(r.MaxVMs(name)),
			Cooldown:           r.Cooldown,
			Parents:            parents(name),
			ShutdownAction:     r.ShutdownAction,
			VMTemplateContents: contents6(s, name, *r),
			ElasticityPolicies: elasticityJSON(r.ElasticityPolicies),
			ScheduledPolicies:  scheduledJSON(r.ScheduledPolicies),
		})
	}
	return st
}

// contents6 is a 6.x role's extra template. OneFlow 6 substitutes $KEY from
// custom_attrs_values but adds nothing to CONTEXT, so every input becomes a
// top-level KEY = "$KEY" that the VM template's CONTEXT references. It must
// not contain CONTEXT = [...]: the shallow merge would replace the VM
// template's whole CONTEXT (token, network, SSH key).
func contents6(s Spec, name string, r Role) string {
	nic := roleNIC(s.Network)
	t := oneTemplate{
		vector("NIC", pair("NAME", nic.Name), pair("NETWORK_ID", nic.NetworkID)),
		pair("CPU", formatCPU(r.CPU)),
		pair("VCPU", strconv.Itoa(r.VCPU)),
		pair("MEMORY", strconv.Itoa(r.MemoryMB)),
		pair(vmcontext.KeyMasterRole, RoleMaster),
	}
	if masterRef(s, name) {
		// Top level, as the inputs are: the worker VM template's CONTEXT
		// references "$ONEKUBE_MASTER_VM_ID" (contextAttr).
		t = append(t, pair(vmcontext.KeyMasterVMID, masterVMIDExpr))
	}
	if name == RoleMaster {
		// Top level too: the master VM template's CONTEXT references
		// "$ONEKUBE_WORKER_TEMPLATE" (contextAttr).
		t = append(t, pair(vmcontext.KeyWorkerTemplate, workerTemplate(s)))
	}
	if g, ok := vmGroupRef(s, name); ok {
		// The 6.x merge is shallow, and a VM template has no VMGROUP
		// of ours to lose.
		t = append(t, vector("VMGROUP", pair("VMGROUP_NAME", g["VMGROUP_NAME"]), pair("ROLE", g["ROLE"])))
	}
	for _, u := range UserInputs(s) {
		t = append(t, pair(u.Name, "$"+u.Name))
	}
	text, err := t.text()
	if err != nil {
		// Keys and values here are checked by CheckSpec; reaching this
		// is a bug, and a panic names it better than a broken template.
		panic(fmt.Sprintf("flow: rendering vm_template_contents: %v", err))
	}
	return text
}

func inputMap(s Spec) map[string]string {
	m := map[string]string{}
	for _, u := range UserInputs(s) {
		m[u.Name] = u.String()
	}
	return m
}

func networksValues(n Network) []map[string]NetworkValue {
	if n.ID == nil {
		return nil
	}
	return []map[string]NetworkValue{{n.Name: {ID: strconv.Itoa(*n.ID)}}}
}

func roleNIC(n Network) NIC { return NIC{Name: "NIC0", NetworkID: "$" + n.Name} }

func templateID(r Role) int {
	if r.TemplateID == nil {
		return UnsetTemplateID
	}
	return *r.TemplateID
}

// masterVMIDExpr is OneFlow's parent-role expression for the master's VM
// ID. OneFlow evaluates ${role.path} when it creates a child role's VMs
// (Role#evaluate, src/flow/lib/models/role.rb, release-6.10.5 and
// release-7.4.0): the text before the first "." must name one of the
// role's parents (else the expression becomes ""), the rest is joined with
// "/", upcased and prefixed "//", and the first parent VM whose XML has it
// gives the value. "${master.vm.id}" is //VM/ID, the oldest master's ID;
// "${master.id}" would be //ID, every <ID> element of the VM (SCHED_ACTION
// IDs included). The scope is 7.x's VM template deep-merged with
// template_contents (VMRole#init_template_attributes) and 6.x's
// vm_template_contents (Role#deploy).
const masterVMIDExpr = "${" + RoleMaster + ".vm.id}"

// masterRef says whether role's VMs get KeyMasterVMID: only workers, and
// only with "straight" deployment, under which OneFlow creates them once
// the master role is RUNNING. With "none" every role deploys at once
// (Strategy#roles_deploy ignores parents), so the master may have no VM
// yet and the value would be empty or depend on role order.
func masterRef(s Spec, role string) bool {
	return role == RoleWorker && s.Service.Deployment == "straight"
}

// parents makes workers wait for the master role: with "straight" and the
// ready status gate, that is until kubeadm init is done and published.
func parents(role string) []string {
	if role == RoleWorker {
		return []string{RoleMaster}
	}
	return nil
}

func formatCPU(c float64) string { return strconv.FormatFloat(c, 'f', -1, 64) }

func elasticityJSON(ps []ElasticityPolicy) []ElasticityPolicyJSON {
	out := make([]ElasticityPolicyJSON, 0, len(ps))
	for _, p := range ps {
		out = append(out, ElasticityPolicyJSON{
			Type: p.Type, Adjust: p.Adjust, MinAdjustStep: p.MinAdjustStep, Expression: p.Expression,
			PeriodNumber: p.PeriodNumber, Period: p.Period, Cooldown: p.Cooldown,
		})
	}
	return out
}

func scheduledJSON(ps []ScheduledPolicy) []ScheduledPolicyJSON {
	out := make([]ScheduledPolicyJSON, 0, len(ps))
	for _, p := range ps {
		out = append(out, ScheduledPolicyJSON{
			Type: p.Type, Adjust: p.Adjust, MinAdjustStep: p.MinAdjustStep,
			StartTime: p.StartTime, Recurrence: p.Recurrence,
		})
	}
	return out
}
