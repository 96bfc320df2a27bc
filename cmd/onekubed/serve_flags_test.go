package main

import (
	"io"
	"testing"
)

// Every loop's knobs stay on the command: serve.go is where the loops of
// several issues meet, and a merge once dropped one loop's flags without
// any other test noticing.
func TestServeHasEveryLoopsFlags(t *testing.T) {
	cmd := newServeCommand(io.Discard)
	for _, name := range []string{
		"cert-renew-before", "wait-limit", "cleanup-grace",
		"remediate-unhealthy-after", "remediate-startup-timeout", "remediate-max-unhealthy-workers",
		"remediate-max-unhealthy-masters", "remediate-action-timeout", "remediate-drain-timeout",
		"autoscale-threshold", "autoscale-unneeded-time", "autoscale-allow-oldest", "autoscale-every",
		"upgrade-fast", "upgrade-idle", "upgrade-drain-timeout",
		"csr-grace", "controlplane-idle",
	} {
		if cmd.Flags().Lookup(name) == nil {
			t.Errorf("onekubed serve has no --%s", name)
		}
	}
}
