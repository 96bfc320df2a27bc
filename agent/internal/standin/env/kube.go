package env

import (
	"os"
	"time"

	"github.com/onekube/onekube/agent/system"
)

// The simulated cluster's living parts (agent/internal/simcluster with a
// real API server): init and join then also act on that API server, as
// kubeadm and the kubelet would, and read the simulation's virtual clock.
const (
	// VarKube names a directory holding a real API server's admin.conf
	// and its CA (ca.crt, ca.key).
	VarKube = "ONEKUBE_STANDIN_KUBE"
	// VarClock names the virtual clock's offset file (system.FileClock),
	// the one the agents of a simulated cluster read.
	VarClock = "ONEKUBE_SIMCLOCK"
)

// RealAdminConf is where init leaves the real server's admin kubeconfig,
// under the host's root (admin.conf keeps the stand-in's pretend endpoint).
const RealAdminConf = StateDir + "/real-admin.conf"

// Now is this host's clock: the virtual one when VarClock is set.
func Now() time.Time {
	if p := os.Getenv(VarClock); p != "" {
		return system.FileClock{Path: p}.Now()
	}
	return time.Now()
}

// KeptConfig is where the kubeadm stand-in keeps a copy of the config a
// command (init, join) last ran with, under the host's root.
func KeptConfig(cmd string) string { return StateDir + "/kubeadm-" + cmd + ".yaml" }
