package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/onekube/onekube/agent/internal/fleet"
)

// runVirtual is the demo on the virtual clock: the fleet harness with the
// model's durations and production tunables, its timeline printed in
// virtual seconds since the instantiate.
func runVirtual(out io.Writer, workers int, deployment string, g time.Duration, timeout time.Duration) error {
	m := fleet.DefaultModel()
	m.G = g
	fmt.Fprintf(out, "1 master + %d workers, deployment %s, every agent in-process on a virtual clock with production settings.\n", workers, deployment)
	fmt.Fprintf(out, "Model: VM boot B = %s, kubeadm init I = %s, kubeadm join J = %s", secs(m.Boot), secs(m.Init), secs(m.Join))
	if deployment == fleet.Straight {
		fmt.Fprintf(out, ", OneFlow noticing READY G = %s (its update event; %s when it falls back to its poll)", secs(m.G), secs(m.GPoll))
	}
	fmt.Fprint(out, "; OneGate answers in 0 virtual s.\n\n")
	res, err := fleet.Run(context.Background(), fleet.Config{Workers: workers, Deployment: deployment, Model: m, Timeout: timeout})
	if res != nil {
		printVirtualTimeline(out, res.Timeline)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\ntime to ready: %s = %.2f× the limit B + I + J = %s\n", secs(res.TimeToReady), res.Ratio(), secs(m.Limit()))
	fmt.Fprintf(out, "legacy straight flow (model B + I + G + B + J): %s = %.2f× the limit\n", secs(m.Legacy()), res.LegacyRatio())
	fmt.Fprintf(out, "master's publish -> last worker starts kubeadm join: %s; OneGate: %d requests, %.1f per worker, peak %d req/s; %s of real time\n",
		secs(res.PublishToLastJoin), res.TotalRequests, res.ReqPerWorker, res.PeakRPS, res.Real.Round(time.Millisecond))
	return nil
}

func printVirtualTimeline(w io.Writer, entries []fleet.Entry) {
	fmt.Fprintf(w, "%7s  %-16s %s\n", "t (s)", "who", "what")
	for _, e := range entries {
		who := "oneflow"
		if e.VM >= 0 {
			who = fmt.Sprintf("vm %d %s", e.VM, e.Role)
		}
		fmt.Fprintf(w, "%7.1f  %-16s %s\n", e.At.Seconds(), who, e.What)
	}
}

// secs prints a duration as seconds, to the tenth.
func secs(d time.Duration) string {
	return fmt.Sprintf("%.1f s", d.Seconds())
}
