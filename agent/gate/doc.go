// Package gate is OneGate as onekube's in-VM programs use it: the calls
// they make, errors classified for their waits (a rejected token, a
// transient failure), erasing keys safely, and loading this VM's
// credentials from its context. onekube-agent and onekubed both import it,
// so onekubed needs nothing of the bootstrap package.
package gate
