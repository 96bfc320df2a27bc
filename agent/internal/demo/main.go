// Command demo runs a simulated onekube service end to end on one machine
// (`make demo`) and prints a timeline of which VM did what, when. By
// default every agent runs in-process on a virtual clock with realistic
// durations (VM boot, kubeadm init and join: docs/bench.md), so the
// minutes of a real start-up print in a second; -live runs one real
// onekube-agent process per VM with the kubeadm and kubectl stand-ins
// instead, with waits scaled down. It is not shipped.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/onekube/onekube/agent/internal/fleet"
)

func main() {
	workers := flag.Int("workers", 3, "worker VMs")
	deployment := flag.String("deployment", fleet.Straight, `OneFlow deployment: "straight" (workers after the master is READY, flow's default) or "none" (all at once)`)
	g := flag.Duration("g", fleet.DefaultModel().G, "G, OneFlow noticing the master's READY in straight mode (its update event; 30s is the poll fallback)")
	live := flag.Bool("live", false, "real onekube-agent processes and stand-ins, waits scaled down, wall-clock timeline")
	timeout := flag.Duration("timeout", 2*time.Minute, "give up after this long (real time)")
	flag.Parse()
	var err error
	if *live {
		err = runLive(os.Stdout, *workers, *deployment, *timeout)
	} else {
		err = runVirtual(os.Stdout, *workers, *deployment, *g, *timeout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}
