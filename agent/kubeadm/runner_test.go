package kubeadm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/agent/system/systemtest"
	vmcontext "github.com/onekube/onekube/context"
)

func TestRunnerCommands(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t.Parallel()
	tok := secret(testToken)
	cases := []struct {
		name string
		run  func(Runner) error
		want string
	}{
		{"init", func(r Runner) error { return r.Init(ctx, "/etc/onekube/init.yaml", tok) },
			"kubeadm init --config /etc/onekube/init.yaml --upload-certs --skip-token-print --skip-certificate-key-print"},
		{"upload-certs", func(r Runner) error { return r.UploadCerts(ctx, "/var/lib/onekube/upload-certs.yaml", tok) },
			"kubeadm init phase upload-certs --upload-certs --config /var/lib/onekube/upload-certs.yaml --skip-certificate-key-print"},
		{"join", func(r Runner) error { return r.Join(ctx, "/etc/onekube/join.yaml", tok) },
			"kubeadm join --config /etc/onekube/join.yaml"},
		{"reset", func(r Runner) error { return r.Reset(ctx) }, "kubeadm reset -f"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fx := (&systemtest.FakeExec{}).On("kubeadm", systemtest.Reply{})
			if err := tc.run(Runner{Exec: fx}); err != nil {
				t.Fatal(err)
			}
			if len(fx.Calls) != 1 {
				t.Fatalf("calls = %v", fx.Calls)
			}
			c := fx.Calls[0]
			if got := strings.Join(append([]string{c.Name}, c.Args...), " "); got != tc.want {
				t.Errorf("command = %q, want %q", got, tc.want)
			}
			if !c.Scrub {
				t.Error("kubeadm's output is not scrubbed")
			}
			if tc.name != "reset" && (len(c.Secrets) != 1 || c.Secrets[0].Reveal() != testToken) {
				t.Errorf("secrets not handed to Exec: %d", len(c.Secrets))
			}
		})
	}
}

func TestRunnerBinary(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t.Parallel()
	fx := (&systemtest.FakeExec{}).On("/opt/k8s/kubeadm", systemtest.Reply{})
	if err := (Runner{Exec: fx, Binary: "/opt/k8s/kubeadm"}).Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if err := (Runner{}).Reset(ctx); err == nil || !strings.Contains(err.Error(), "no Exec") {
		t.Errorf("nil Exec: %v", err)
	}
}

// A failing kubeadm that echoes the token must not carry it into the error.
func TestRunnerRedactsFailures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t.Parallel()
	tok := secret(testToken)
	fx := (&systemtest.FakeExec{}).On("kubeadm join", systemtest.Reply{
		Stderr: "error execution phase preflight: couldn't validate the identity of the API Server: token " + testToken + " rejected",
		Code:   1,
	})
	err := Runner{Exec: fx}.Join(ctx, "/j.yaml", tok)
	var ee *system.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 {
		t.Fatalf("err = %v, want *system.ExitError", err)
	}
	if strings.Contains(err.Error(), testToken) || !strings.Contains(err.Error(), vmcontext.Mask) {
		t.Errorf("token not redacted: %v", err)
	}
	if !strings.Contains(err.Error(), "couldn't validate the identity") {
		t.Errorf("kubeadm's message lost: %v", err)
	}
}

// A key kubeadm generated itself, which no caller knows, reaching the pipe
// in pieces: the error carries neither it nor the token of the join command.
func TestRunnerScrubsWhatItWasNotTold(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t.Parallel()
	key := strings.Repeat("8d3c1f0a", 8) // 64 hex digits
	for _, split := range []int{1, 5, 40} {
		fx := (&systemtest.FakeExec{}).On("kubeadm init", systemtest.Reply{
			Stdout: "[upload-certs] Using certificate key:\n" + key + "\n" +
				"kubeadm join 10.0.0.5:6443 --token " + testToken + " --control-plane --certificate-key " + key + "\n",
			Code:  -1, // killed: nothing on stderr, the tail is stdout's
			Split: split,
		})
		err := Runner{Exec: fx}.UploadCerts(ctx, "/u.yaml")
		var ee *system.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("err = %v, want *system.ExitError", err)
		}
		if all := err.Error() + ee.Brief(); strings.Contains(all, key) || strings.Contains(all, testToken) {
			t.Errorf("writes of %d: a secret passed", split)
		}
		if !strings.Contains(err.Error(), "Using certificate key: "+vmcontext.Mask) &&
			!strings.Contains(err.Error(), "Using certificate key:\n"+vmcontext.Mask) {
			t.Errorf("writes of %d: kubeadm's output lost: %v", split, err)
		}
	}
}

func TestRunnerVersion(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t.Parallel()
	cases := []struct {
		out, want, err string
	}{
		{"v1.36.3\n", "v1.36.3", ""},
		{"1.35.0", "v1.35.0", ""},
		{"v1.37.0-rc.1\n", "v1.37.0-rc.1", ""},
		{"v0.0.0-master+$Format:%H$\n", "", "malformed build metadata"},
		{"v0.0.0-master\n", "", "only Kubernetes 1.x"},
		{"", "", "KubernetesVersion is empty"},
		{"v1.36", "", "needs a patch release"},
		{"kubeadm version: &version.Info{Major:\"1\"}", "", "invalid Kubernetes version"},
	}
	for _, tc := range cases {
		fx := (&systemtest.FakeExec{}).On("kubeadm version", systemtest.Reply{Stdout: tc.out})
		got, err := Runner{Exec: fx}.Version(ctx)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Version(%q) err = %v, want %q", tc.out, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Version(%q) = %q, %v; want %q", tc.out, got, err, tc.want)
		}
		if c := fx.Calls[0]; strings.Join(c.Args, " ") != "version -o short" {
			t.Errorf("args = %v", c.Args)
		}
	}
	fx := (&systemtest.FakeExec{}).On("kubeadm", systemtest.Reply{Err: errors.New("exec: \"kubeadm\": executable file not found in $PATH")})
	if _, err := (Runner{Exec: fx}).Version(ctx); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing binary: %v", err)
	}
}
