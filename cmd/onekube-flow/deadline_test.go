package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// hangVM makes oned hang on one.vm.info for VM id while hang is set, until
// the client gives up.
func hangVM(t *testing.T, e *statusEnv, id string, hang *atomic.Bool) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if hang.Load() && bytes.Contains(body, []byte("one.vm.info")) && bytes.Contains(body, []byte(">"+id+"<")) {
			<-r.Context().Done()
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		e.od.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e.env["ONE_XMLRPC"] = srv.URL + "/RPC2"
}

// TestStatusDeadline: a read that does not finish within --deadline ends
// with the VMs read so far, the others marked, a message saying so, and
// exit 3; under --wait, each round has that deadline, so a hung round does
// not stall the wait.
func TestStatusDeadline(t *testing.T) {
	t.Parallel()
	e := newStatusEnv(t)
	var hang atomic.Bool
	hang.Store(true)
	hangVM(t, e, "50", &hang)

	start := time.Now()
	code, out, errs := e.run(t, nil, "status", "12", "--deadline", "300ms")
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("status took %s with --deadline 300ms", took)
	}
	if code != exitInProgress || !strings.Contains(out, "not read: the deadline passed") ||
		!strings.Contains(errs, "the deadline (300ms) passed before 1 of 2 VMs were read") {
		t.Errorf("code %d\nstdout: %s\nstderr: %s", code, out, errs)
	}

	// --wait: the first round hangs on VM 50 and is cut by --deadline; the
	// VM then answers, ready, and the next round sees the cluster ready.
	e.of.Service[12] = statusService(2, 2)
	e.od.VMs[50] = statusVM(50, "done", true, nil)
	sleeps := 0
	sleep := func(ctx context.Context, _ time.Duration) error {
		sleeps++
		hang.Store(false)
		return ctx.Err()
	}
	start = time.Now()
	code, out, errs = e.run(t, sleep, "status", "12", "--wait", "10m", "--deadline", "300ms")
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("status --wait took %s", took)
	}
	if code != 0 || sleeps != 1 || !strings.Contains(out, "2 of 2 VMs ready: ready") || !strings.Contains(errs, "1 not read before the deadline") {
		t.Errorf("wait: code %d after %d sleeps\nstdout: %s\nstderr: %s", code, sleeps, out, errs)
	}

	// OneFlow hangs: the service itself is not read in time, an error (1)
	// that says which bound passed.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(slow.Close)
	e.env["ONEFLOW_URL"] = slow.URL
	code, _, errs = e.run(t, nil, "status", "12", "--deadline", "300ms")
	if code != exitFailed || !strings.Contains(errs, "reading service 12") || !strings.Contains(errs, "(the 300ms bound passed: raise --deadline or --wait)") {
		t.Errorf("hung OneFlow: code %d, stderr %s", code, errs)
	}

	// Flags: a deadline must be positive; help documents it.
	if code, _, errs := e.run(t, nil, "status", "12", "--deadline", "0s"); code != exitUsage || !strings.Contains(errs, "--deadline 0s") {
		t.Errorf("--deadline 0s: code %d, %s", code, errs)
	}
	if _, out, _ := e.run(t, nil, "status", "--help"); !strings.Contains(out, "--deadline") || !strings.Contains(out, "(default 2m0s)") {
		t.Errorf("help:\n%s", out)
	}
}
