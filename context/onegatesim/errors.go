package onegatesim

import "errors"

var (
	// ErrNoEndpoint: a VM with TOKEN=YES needs the OneGate URL in its
	// context, and it is unknown until Start is called or Options.Endpoint
	// is set (oned likewise refuses a VM when ONEGATE_ENDPOINT is unset).
	ErrNoEndpoint = errors.New("onegate endpoint unknown: call Start first or set Options.Endpoint")
	// ErrBadTemplate wraps every reason a service template is refused.
	ErrBadTemplate = errors.New("invalid service template")
	// ErrMissingInputs is OneFlow's refusal when user inputs lack values.
	ErrMissingInputs = errors.New("The Service template specifies User Inputs but no values have been found")
	// ErrPoolExhausted: the NIC address pool has no free address left.
	ErrPoolExhausted = errors.New("network address pool exhausted")
	// ErrUnknownVM: no VM with that ID exists (or it was removed).
	ErrUnknownVM = errors.New("unknown VM")
	// ErrClosed: the simulator was closed.
	ErrClosed = errors.New("simulator closed")
	// ErrServiceFailed: a service went to FAILED_DEPLOYING.
	ErrServiceFailed = errors.New("service failed to deploy")
)
