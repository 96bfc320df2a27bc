package kubeadm

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
)

var (
	oracleKey   = regexp.MustCompile(`[0-9a-f]{64}`)
	oracleToken = regexp.MustCompile(`[a-z0-9]{6}\.[a-z0-9]{16}`)
)

// TestOracleOutputKeepsSecretsOut runs real kubeadm commands that print a
// certificate key and a token through Runner's own path (system.OSExec,
// output scrubbed as read): kubeadm prints them as the scrubber expects,
// and none comes out.
func TestOracleOutputKeepsSecretsOut(t *testing.T) {
	o := findOracle(t)
	r := Runner{Exec: system.OSExec{}, Binary: o.bin}
	for _, tc := range []struct {
		args  []string
		shape *regexp.Regexp
	}{
		{[]string{"certs", "certificate-key"}, oracleKey},
		{[]string{"token", "generate"}, oracleToken},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			raw, err := runOracle(t, o.bin, tc.args...)
			if err != nil {
				t.Fatalf("kubeadm %v: %v", tc.args, err)
			}
			if !tc.shape.MatchString(raw) {
				t.Fatalf("kubeadm %v no longer prints what the scrubber masks (%s): %d bytes", tc.args, tc.shape, len(raw))
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			res, err := r.run(ctx, nil, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			out := string(res.Stdout) + string(res.Stderr)
			if tc.shape.MatchString(out) {
				t.Fatal("a secret passed the scrubber") // not printed: a test shows no secret either
			}
			if got := strings.TrimSpace(out); got != vmcontext.Mask {
				t.Errorf("output = %q, want %q", got, vmcontext.Mask)
			}
		})
	}
}

// TestOracleAcceptsTheSkipFlags: the real kubeadm takes the flags Runner
// passes along with --config (init reads the missing config, so it fails
// after checking them), and refuses a flag that cannot go with --config,
// which shows the check ran.
func TestOracleAcceptsTheSkipFlags(t *testing.T) {
	o := findOracle(t)
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	for _, tc := range []struct {
		args    []string
		refused bool
	}{
		{[]string{"init", "--config", missing, "--upload-certs", "--skip-token-print", "--skip-certificate-key-print"}, false},
		{[]string{"init", "phase", "upload-certs", "--upload-certs", "--config", missing, "--skip-certificate-key-print"}, false},
		{[]string{"init", "phase", "upload-certs", "--upload-certs", "--config", missing, "--certificate-key", strings.Repeat("0", 64)}, true},
	} {
		out, err := runOracle(t, o.bin, tc.args...)
		if err == nil {
			t.Fatalf("kubeadm %v succeeded with a missing config", tc.args)
		}
		refused := strings.Contains(out, "can not mix") || strings.Contains(out, "unknown flag")
		if refused != tc.refused || !refused && !strings.Contains(out, "missing.yaml") {
			t.Errorf("kubeadm %v: refused the flags %v, want %v:\n%s", tc.args, refused, tc.refused, oracleKey.ReplaceAllString(out, vmcontext.Mask))
		}
	}
}
