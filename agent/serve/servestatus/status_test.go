package servestatus_test

import (
	"encoding/json"
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

// TestReadStatusMasks: a loop's error or reason quoting a token (OneGate
// echoing a rejected update, say), in any case, shows no part of it, in
// the text or re-encoded as JSON.
func TestReadStatusMasks(t *testing.T) {
	t.Parallel()
	const doc = `{"acting":true,"identity":"m-1","updated_at":"2026-11-22T12:00:00Z","loops":{
	  "publish":{"last_error":"OneGate: 400: ONEGATE_K8S_TOKEN=ABCDEF.0123456789ABCDEF rejected"},
	  "tokens":{"report":{"waiting":[7],"not_waiting":{"8":"token qwerty.asdfghjkl1234567 expired"},"tokens":1}},
	  "cleanup":{"report":{"refused":{"w-2":"secret Q1W2E3R4T5Y6U7I8 seen"}}}}}`
	path := filepath.Join(t.TempDir(), "serve.json")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := servestatus.ReadStatus(path)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := st.WriteText(&text, time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{text.String(), string(js)} {
		low := strings.ToLower(out)
		for _, part := range []string{"0123456789abcdef", "asdfghjkl1234567", "q1w2e3r4t5y6u7i8", "qwerty."} {
			if strings.Contains(low, part) {
				t.Errorf("serve status shows %q:\n%s", part, out)
			}
		}
		if !strings.Contains(out, "rejected") || !strings.Contains(out, "expired") || !strings.Contains(out, "seen") {
			t.Errorf("serve status lost its text:\n%s", out)
		}
	}
}
