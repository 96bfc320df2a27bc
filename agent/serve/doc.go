// Package serve is `onekubed serve`: the loops that keep a cluster
// alive after bootstrap, on every master.
//
// Each loop is level-triggered, in the manner of Kubernetes' own small
// controllers (tokencleaner, bootstrapsigner): a tick reads the world as it
// is now (OneGate, the API server) and converges it, remembering nothing a
// restart would lose. Whatever must survive lives in OneGate or the API
// server. Loops marked LeaderOnly run on the acting master alone: the
// holder of the Lease kube-system/onekube-serve (leader.go). One file per
// loop; the Runner owns timing, logging, leadership, systemd's watchdog
// and the status file.
package serve
