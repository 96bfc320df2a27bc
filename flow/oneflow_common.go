package flow

// ServiceHeader holds the service-level fields that OneFlow 6.x and 7.x
// share; each version's template embeds it (encoding/json flattens it, in
// this order, ahead of the version's own fields).
type ServiceHeader struct {
	Name              string                    `json:"name"`
	Description       string                    `json:"description"`
	Deployment        string                    `json:"deployment"`
	ReadyStatusGate   bool                      `json:"ready_status_gate"`
	ShutdownAction    string                    `json:"shutdown_action,omitempty"`
	AutomaticDeletion bool                      `json:"automatic_deletion,omitempty"`
	OnHold            bool                      `json:"on_hold,omitempty"`
	Networks          map[string]string         `json:"networks,omitempty"`
	NetworksValues    []map[string]NetworkValue `json:"networks_values,omitempty"`
}

// ElasticityPolicyJSON is an elasticity policy in a service template (the
// same in 6.x and 7.x). adjust is never omitted: 0 is a valid value and a
// missing adjust is a 400.
type ElasticityPolicyJSON struct {
	Type          string `json:"type"`
	Adjust        int    `json:"adjust"`
	MinAdjustStep *int   `json:"min_adjust_step,omitempty"`
	Expression    string `json:"expression"`
	PeriodNumber  *int   `json:"period_number,omitempty"`
	Period        *int   `json:"period,omitempty"`
	Cooldown      *int   `json:"cooldown,omitempty"`
}

// ScheduledPolicyJSON is a scheduled policy: exactly one of StartTime and
// Recurrence is set.
type ScheduledPolicyJSON struct {
	Type          string `json:"type"`
	Adjust        int    `json:"adjust"`
	MinAdjustStep *int   `json:"min_adjust_step,omitempty"`
	StartTime     string `json:"start_time,omitempty"`
	Recurrence    string `json:"recurrence,omitempty"`
}

// NetworkValue selects the virtual network for a network input at
// instantiate: an existing network by ID.
type NetworkValue struct {
	ID string `json:"id"`
}

// NIC is one entry of a 7.x template_contents.NIC list.
type NIC struct {
	Name      string `json:"NAME"`
	NetworkID string `json:"NETWORK_ID"`
}
