// Package onegatesim plays OneGate and enough of OneFlow to run a whole
// OpenNebula service on loopback, for the project's end-to-end tests.
//
// Instantiate takes a service template as onekube-flow renders it (OneFlow
// 6.x or 7.x shape) and an instantiate merge document, and does what the
// OneFlow server of Options.Version does with them: validate the template
// as create would (its own validator, messages included; 7.x converts a
// 6.x document first), run the instantiate route's checks on the merge
// document, merge it (by role name on 7.x, by array position on 6.x),
// validate again, and deploy: cardinality, straight or parallel ("none")
// ordering, and the ready_status_gate, under which a child role's VMs are
// created only once every VM of its parents has reported READY=YES. A
// refusal is a *FlowError carrying the HTTP status the server answers; a
// service that the server accepts but cannot deploy (a NIC on a null
// network, a NIC that is not a list) goes to FAILED_DEPLOYING instead.
// Each VM gets an ID, a OneGate token, a NIC address from a TEST-NET pool
// and a context directory holding context.sh (in oned's exact format) and
// token.txt, so a real onekube-agent can boot against it.
//
// The HTTP side reproduces the OneGate server (src/onegate/onegate-server.rb)
// route by route: token auth, the same-service check, restricted attributes,
// the PUT escaping (escape_attr) and oned's template parser and merge behind
// it, the short and extended /service shapes, erase, role scaling (through
// OneFlow's .to_i, cooldown and refusals) and VM actions. Behaviour that
// changed between releases follows Options.Version: among others the 7.2
// 500 bodies, and on 7.x the Rack 3 params parser eating form-typed bodies
// before the scale and action routes read them. With
// Options.ShutdownTimeout, scale-down is OpenNebula's soft terminate
// (shutdown.go: LCM_STATE SHUTDOWN, a guest hook, DONE on power-off or at
// the timeout), and TerminateHard drops a VM at once. VMs have oned's
// states: terminate, poweroff (soft or hard), resume and rename through
// OneGate or Act change them as oned does, OnVMPower tells the harness
// when a guest must be cut off or booted, SetLCMState plays UNKNOWN and
// the *_FAILURE states, and OneFlow's watchdog answers them (vmstate.go:
// WARNING, which refuses every scale; a DONE VM dropped and the
// cardinality lowered). Faults (latency, 5xx,
// dropped connections, a VM with a wrong token) can be injected while it
// runs, and every request is counted per VM. Sim.Hostile scripts a VM in an
// attacker's hands (sibling writes and erases, actions, scaling, extended
// reads, the restricted-attribute bypass) through the same routes, and
// Options.Deny with HardenedDeny models a hardened onegate-server.conf.
//
// The protocol facts come from shared/reference/onegate.md and oneflow.md
// and from OpenNebula/one at release-6.10.5 and release-7.4.0, cited where
// they are implemented. Tests named TestFidelity_* pin one real behaviour
// each.
package onegatesim
