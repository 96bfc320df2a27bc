// Package e2e holds the agent's end-to-end tests and benchmarks: real
// onekube-agent processes (or in-process agents, for the benchmark) against
// the OneGate/OneFlow simulator, with flow's rendered service template.
package e2e
