//go:build realbed

// Package e2e holds the real-control-plane tests: the test bed's own
// (kubeadm driven directly) and the agent's end to end (OneGate simulator,
// the real onekube-agent, the real kubeadm and control plane). They need
// root and the binaries of `make testbed`; `make e2e-real` runs them.
package e2e

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/testbed"
)

var bins testbed.Binaries

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "onekube-realbed-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	start := time.Now()
	fmt.Printf("realbed: building onekube-agent, onekubed, fakenode and vminit\n")
	bins, err = testbed.Prepare(testbed.DefaultVersion, dir)
	if err != nil {
		// Require reports it per test: a skip, or a failure under CI.
		fmt.Fprintf(os.Stderr, "realbed: %v\n", err)
	} else {
		fmt.Printf("realbed: tools built in %s; Kubernetes %s from %s\n", time.Since(start).Round(time.Second), bins.Version, bins.K8sDir)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// newBed starts a bed for one test; its logs go into the failure message,
// and it is torn down even when the test fails half-way.
func newBed(t *testing.T) *testbed.Bed {
	t.Helper()
	return newBedWith(t, bins)
}

// newBedWith is newBed with other binaries (another release).
func newBedWith(t *testing.T, bins testbed.Binaries) *testbed.Bed {
	t.Helper()
	testbed.Require(t)
	if bins.Agent == "" {
		msg := "the bed's binaries are missing: run `make testbed` (see realbed: lines above)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	b, err := testbed.Start(testbed.Options{Dir: dir, Bins: bins, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs of every process of the bed:\n%s", b.Logs())
		}
		if err := b.Close(); err != nil {
			t.Errorf("tearing the bed down: %v", err)
		}
		t.Logf("bed peak RSS: %d MiB", b.PeakRSS()>>20)
	})
	return b
}
