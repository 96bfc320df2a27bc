// Package protocol is the contract between onekube-agent, onekubed and
// onekube-flow as it travels through OneGate: which keys exist, who writes
// each one, and whether oned vouches for it or any VM of the service could
// have written it (docs/trust.md). It imports nothing of the programs, so
// all three can depend on it.
package protocol
