package flow

// ServiceTemplate7 is a OneFlow 7.0-7.4 service template.
type ServiceTemplate7 struct {
	ServiceHeader
	UserInputs map[string]string `json:"user_inputs,omitempty"`
	Roles      []Role7           `json:"roles"`
}

// Role7 is a 7.x VM role ("type": "vm").
type Role7 struct {
	Name               string                 `json:"name"`
	Type               string                 `json:"type"`
	TemplateID         int                    `json:"template_id"`
	Cardinality        int                    `json:"cardinality"`
	MinVMs             *int                   `json:"min_vms,omitempty"`
	MaxVMs             *int                   `json:"max_vms,omitempty"`
	Cooldown           *int                   `json:"cooldown,omitempty"`
	Parents            []string               `json:"parents,omitempty"`
	ShutdownAction     string                 `json:"shutdown_action,omitempty"`
	TemplateContents   TemplateContents7      `json:"template_contents"`
	ElasticityPolicies []ElasticityPolicyJSON `json:"elasticity_policies"`
	ScheduledPolicies  []ScheduledPolicyJSON  `json:"scheduled_policies"`
}

// TemplateContents7 is deep-merged over the role's VM template at deploy:
// CONTEXT keys merge, the NIC list replaces the template's NICs. The server
// writes user_inputs_values into CONTEXT itself.
type TemplateContents7 struct {
	CPU     string            `json:"CPU,omitempty"`
	VCPU    string            `json:"VCPU,omitempty"`
	Memory  string            `json:"MEMORY,omitempty"`
	NIC     []NIC             `json:"NIC"`
	Context map[string]string `json:"CONTEXT,omitempty"`
	// VMGroup puts the role's VMs in a VM group role (vmgroup.go).
	VMGroup map[string]string `json:"VMGROUP,omitempty"`
}
