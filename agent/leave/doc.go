// Package leave is `onekubed leave`: a node taking itself out of the
// cluster while its VM shuts down (onekube-node.service's ExecStop).
//
// What to do comes from OneGate's LCM_STATE for this VM: SHUTDOWN means
// terminate (scale-down, `onevm terminate`), so cordon, drain and delete
// the Node; SHUTDOWN_POWEROFF and SHUTDOWN_UNDEPLOY mean the VM comes back
// with its disk, so cordon and drain only, and `leave --uncordon` at the
// next boot undoes it; anything else (a guest reboot keeps RUNNING) means
// nothing. All of it fits KVM's SHUTDOWN_TIMEOUT (180 s in kvmrc) before
// the VM is destroyed: the budget is 150 s.
//
// It works with the node's own credential (kubelet.conf), never an admin
// one: under the Node authorizer and NodeRestriction a node may cordon
// itself, list and evict its own pods, and, with the grant serve keeps
// (serve/noderbac.go), delete its own Node and no other. Eviction goes
// through k8s.io/kubectl/pkg/drain, so PodDisruptionBudgets hold.
package leave
