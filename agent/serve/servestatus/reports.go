package servestatus

import "time"

// The loops' reports, as the status file holds them under
// Loops[name].Report. agent/serve fills them; WriteText reads them.

// PublishReport is the publish loop's part of the status: never the token.
type PublishReport struct {
	Published bool   `json:"published"`
	Expires   string `json:"expires,omitempty"`
	// JoinDataRestored counts the join facts (ONEGATE_K8S_MASTER, _PORT,
	// _HASH, _ENDPOINT) put back since start after a rewrite.
	JoinDataRestored int `json:"join_data_restored,omitempty"`
}

// TokensReport is what `onekube-agent status` shows of the tokens loop:
// never a token, only its expiry.
type TokensReport struct {
	Waiting []int `json:"waiting"`
	// WaitingSince is, for each waiting VM, serve's first sight of it
	// waiting once it ran (a VM not yet run has none).
	WaitingSince map[string]time.Time `json:"waiting_since,omitempty"`
	// GivenUp maps the VMs that waited past WaitLimit to when they started
	// waiting: they no longer count as waiting.
	GivenUp      map[string]time.Time `json:"given_up,omitempty"`
	WaitLimit    string               `json:"wait_limit,omitempty"`
	NotWaiting   map[string]string    `json:"not_waiting,omitempty"` // VM ID: why a VM without a Node waits for no token
	Growing      bool                 `json:"service_growing,omitempty"`
	TokenExpires time.Time            `json:"token_expires,omitzero"`
	Tokens       int                  `json:"tokens"`
}

// CertsReport is the certs loop's part of the status: this master's
// earliest leaf certificate, its last renewal, and why it cannot renew.
type CertsReport struct {
	Earliest     time.Time `json:"earliest,omitzero"`
	EarliestFile string    `json:"earliest_file,omitempty"`
	Renewed      time.Time `json:"renewed,omitzero"`
	RenewBefore  string    `json:"renew_before"`
	State        string    `json:"state"`
	Error        string    `json:"error,omitempty"`
}

// CleanupReport is the cleanup loop's part of the status.
type CleanupReport struct {
	// NodesWithoutVM maps a Node to when its VM was first seen gone.
	NodesWithoutVM map[string]time.Time `json:"nodes_without_vm,omitempty"`
	Refused        map[string]string    `json:"refused,omitempty"`
	Deleted        []string             `json:"deleted_last_tick,omitempty"`
}

// RemediateReport is the remediation loop's part of the status: whether
// it may act, what it judges unhealthy, what stopped it, and its last
// actions.
type RemediateReport struct {
	// State is "on", or why it does nothing ("off: ...", "paused: ...").
	State string `json:"state"`
	// Unhealthy maps a VM ID to why it is judged unhealthy.
	Unhealthy map[string]string `json:"unhealthy,omitempty"`
	// Stopped holds each short-circuit: too many unhealthy in a group.
	Stopped []string `json:"stopped,omitempty"`
	// InFlight maps a VM ID to its ladder's rung and what it waits for.
	InFlight map[string]string `json:"in_flight,omitempty"`
	// Blocked maps a VM ID to why its next rung was not taken (a guard, a
	// refusal, a failure).
	Blocked map[string]string `json:"blocked,omitempty"`
	// Actions are the last actions, oldest first.
	Actions []RemediateAction `json:"actions,omitempty"`
}

// RemediateAction is one rung taken.
type RemediateAction struct {
	At     time.Time `json:"at"`
	VM     int       `json:"vm"`
	Node   string    `json:"node,omitempty"`
	Role   string    `json:"role,omitempty"`
	Step   string    `json:"step"`
	Detail string    `json:"detail,omitempty"`
	Error  string    `json:"error,omitempty"`
}
