// Package fleet runs one master and N worker agents in-process against one
// OneGate/OneFlow simulator, all on one virtual clock (VClock), with
// production tunables and a model of what is not run for real (VM boot,
// kubeadm init and join, OneFlow's delay): minutes of cluster start-up in
// seconds, measured in virtual time. `make bench-report` and `make demo`
// are built on it; docs/bench.md says what it models and what it does not.
package fleet
