package agent

import "github.com/onekube/onekube/agent/gate"

// OneGate, its Config, the production client and the error classes live
// in agent/gate, which onekubed shares; the agent keeps its names for them.
type (
	OneGate       = gate.OneGate
	OneGateConfig = gate.Config
)

// NewOneGateClient is the production Deps.NewOneGate.
func NewOneGateClient(c OneGateConfig) (OneGate, error) { return gate.NewClient(c) }

// Retryable marks err as transient (gate.Retryable).
func Retryable(err error) error { return gate.Retryable(err) }

// IsRetryable reports whether err was marked transient.
func IsRetryable(err error) bool { return gate.IsRetryable(err) }

// EraseKeys deletes keys from this VM's USER_TEMPLATE (gate.EraseKeys).
var EraseKeys = gate.EraseKeys
