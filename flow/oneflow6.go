package flow

// ServiceTemplate6 is a OneFlow 6.8/6.10 service template.
type ServiceTemplate6 struct {
	ServiceHeader
	CustomAttrs map[string]string `json:"custom_attrs,omitempty"`
	Roles       []Role6           `json:"roles"`
}

// Role6 is a 6.x role. VMTemplateContents is raw template text; it must not
// set CONTEXT, which would replace the VM template's whole CONTEXT.
type Role6 struct {
	Name               string                 `json:"name"`
	VMTemplate         int                    `json:"vm_template"`
	Cardinality        int                    `json:"cardinality"`
	MinVMs             *int                   `json:"min_vms,omitempty"`
	MaxVMs             *int                   `json:"max_vms,omitempty"`
	Cooldown           *int                   `json:"cooldown,omitempty"`
	Parents            []string               `json:"parents,omitempty"`
	ShutdownAction     string                 `json:"shutdown_action,omitempty"`
	VMTemplateContents string                 `json:"vm_template_contents"`
	ElasticityPolicies []ElasticityPolicyJSON `json:"elasticity_policies"`
	ScheduledPolicies  []ScheduledPolicyJSON  `json:"scheduled_policies"`
}
