// Package upgrade holds the decisions of an in-place Kubernetes upgrade
// (docs/upgrades.md): version and skew rules, the plan the owner writes
// into the cluster, the refusals, the order in which nodes are let go, and
// the node executor that runs one node's steps. Side effects sit behind
// the seams of seams.go, so every rule is table-testable; the loops that
// drive them live in agent/serve (the orchestrator) and cmd/onekubed.
package upgrade
