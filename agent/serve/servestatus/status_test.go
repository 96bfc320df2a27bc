package servestatus_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/serve/servestatus"
)

// A standby master's file, as serve writes it, reads back and prints the
// acting master, the token's expiry as mirrored here and a loop's error.
func TestReadStatusText(t *testing.T) {
	t.Parallel()
	st, err := servestatus.ReadStatus(filepath.Join("testdata", "standby.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := st.WriteText(&out, time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"serve:            standby; master-10 acts",
		"join token:       expires 2026-11-22T12:30:00Z (in 30m0s) (as published here)",
		"  kubeconfig error: OneGate: 500",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
}

// The acting master's file shows when each waiting VM started waiting (a
// VM not yet run by oned has no clock) and the VMs waited for no more.
func TestReadStatusTextWaiting(t *testing.T) {
	t.Parallel()
	st, err := servestatus.ReadStatus(filepath.Join("testdata", "acting.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := st.WriteText(&out, time.Date(2026, 11, 22, 13, 30, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"serve:            acting for the cluster (master-10)",
		"waiting VMs:      12 (since 2026-11-22T13:00:00Z), 13",
		"  given up:       VM 11: waiting since 2026-11-22T12:00:00Z, past the 1h0m0s limit; no join token is kept for it",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
}

func TestReadStatusErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := servestatus.ReadStatus(filepath.Join(dir, "missing.json")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v, want not-exist", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := servestatus.ReadStatus(bad); err == nil || !strings.Contains(err.Error(), "parsing") {
		t.Errorf("corrupt file: %v", err)
	}
}
