// Package onegatesim plays OneGate and enough of OneFlow to run a whole
// OpenNebula service on loopback, for the project's end-to-end tests.
//
// Instantiate takes a service template as onekube-flow renders it (OneFlow
// 6.x or 7.x shape) and deploys its roles the way OneFlow does: cardinality,
// straight or parallel ("none") ordering, and the ready_status_gate, under
// which a child role's VMs are created only once every VM of its parents has
// reported READY=YES. Each VM gets an ID, a OneGate token, a NIC address from
// a TEST-NET pool and a context directory holding context.sh (in oned's
// exact format) and token.txt, so a real onekube-agent can boot against it.
//
// The HTTP side reproduces the OneGate server (src/onegate/onegate-server.rb)
// route by route: token auth, the same-service check, restricted attributes,
// the PUT escaping (escape_attr) and oned's template parser behind it, the
// short and extended /service shapes, erase and role scaling. Behaviour that
// changed between releases follows Options.Version. Faults (latency, 5xx,
// dropped connections, a VM with a wrong token) can be injected while it
// runs, and every request is counted per VM.
//
// The protocol facts come from shared/reference/onegate.md and oneflow.md.
package onegatesim
