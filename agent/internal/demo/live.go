package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/onekube/onekube/agent/internal/simcluster"
)

// runLive is the demo with real processes: one onekube-agent per VM.
func runLive(out io.Writer, workers int, deployment string, timeout time.Duration) error {
	dir, err := os.MkdirTemp("", "onekube-demo")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	fmt.Fprintln(out, "building onekube-agent, onekubed and the kubeadm/kubectl stand-ins...")
	bins, err := simcluster.Build(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "instantiating 1 master + %d workers (deployment %s) in the OneGate/OneFlow simulator...\n\n", workers, deployment)
	c, err := simcluster.Start(simcluster.Options{
		Dir:         dir,
		Bins:        bins,
		Workers:     workers,
		Deployment:  deployment,
		CNIManifest: simcluster.FlannelManifest,
		// The production backoff (2s, x1.5, capped at 30s) scaled down so
		// the demo takes seconds.
		Args: []string{"--poll-interval", "100ms", "--max-poll-interval", "1s"},
	})
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	runs, err := c.Wait(ctx, 1+workers)
	if err != nil {
		return err
	}
	_ = c.Sim.WaitServiceRunning(ctx)

	lines := timeline(c, runs)
	printTimeline(out, lines)
	failed := 0
	for _, r := range runs {
		if r.Code != 0 {
			failed++
			fmt.Fprintf(out, "\nVM %d (%s) failed, exit %d:\n%s", r.VM.ID, r.VM.Role, r.Code, r.Output())
		}
	}
	fmt.Fprintf(out, "\nservice %d: %s; %d agents, %d failed; OneGate requests: %d\n",
		c.ServiceID, c.Sim.ServiceState(c.ServiceID), len(runs), failed, c.Sim.TotalStats().Total)
	if failed > 0 {
		return fmt.Errorf("%d agents failed", failed)
	}
	return nil
}
