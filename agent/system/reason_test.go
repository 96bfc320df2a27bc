package system

import (
	"strings"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
)

// Outputs as the real tools print them (kubeadm v1.36
// cmd/kubeadm/app/preflight/checks.go RunChecks, util/errors handleError;
// the crictl line of kubeadm releases that shelled out to crictl).
const (
	preflightCRI = `[init] Using Kubernetes version: v1.36.3
[preflight] Running pre-flight checks
[preflight] Some fatal errors occurred:
	[ERROR CRI]: container runtime is not running: output: time="2024-02-12T10:00:00Z" level=fatal msg="validate service connection: validate CRI v1 runtime API for endpoint \"unix:///var/run/containerd/containerd.sock\": rpc error: code = Unimplemented desc = unknown service runtime.v1.RuntimeService"
, error: exit status 1
	[ERROR FileAvailable--etc-kubernetes-manifests-kube-apiserver.yaml]: /etc/kubernetes/manifests/kube-apiserver.yaml already exists
[preflight] If you know what you are doing, you can make a check non-fatal with ` + "`--ignore-preflight-errors=...`" + `
error execution phase preflight: preflight checks failed
To see the stack trace of this error execute with --v=5 or higher`
	duplicateNode = `[preflight] Running pre-flight checks
[kubelet-start] Writing kubelet configuration to file "/var/lib/kubelet/config.yaml"
error execution phase kubelet-start: a Node with name "worker-13" and status "Ready" already exists in the cluster. You must delete the existing Node or change the name of this new joining Node
To see the stack trace of this error execute with --v=5 or higher`
)

func TestReason(t *testing.T) {
	t.Parallel()
	tok := vmcontext.NewSecret("abcdef.0123456789abcdef")
	cases := map[string]struct {
		r    Result
		want string
	}{
		"preflight errors first, then the phase line": {Result{Stderr: []byte(preflightCRI)},
			`[ERROR CRI]: container runtime is not running: output: time="2024-02-12T10:00:00Z" level=fatal msg="validate service connection: validate CRI v1 runtime API for endpoint \"unix:///var/run/containerd/containerd.sock\": rpc error: code = Unimplemented desc = unknown service runtime.v1.RuntimeService" | [ERROR FileAvailable--etc-kubernetes-manifests-kube-apiserver.yaml]: /etc/kubernetes/manifests/kube-apiserver.yaml already exists | error execution phase preflight: preflight checks failed`},
		"kubelet-start refuses a duplicate": {Result{Stderr: []byte(duplicateNode)},
			`error execution phase kubelet-start: a Node with name "worker-13" and status "Ready" already exists in the cluster. You must delete the existing Node or change the name of this new joining Node`},
		"kubectl": {Result{Stderr: []byte("error: error validating \"cni.yaml\": unknown field\n")},
			`error: error validating "cni.yaml": unknown field`},
		"nothing telling: the last line": {Result{Stdout: []byte("a\nb\n\n"), Stderr: []byte("  \n")}, "b"},
		"secrets masked":                 {Result{Stderr: []byte("error: token abcdef.0123456789abcdef rejected")}, "error: token " + vmcontext.Mask + " rejected"},
		"empty":                          {Result{}, ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := Reason(c.r, tok); got != c.want {
				t.Errorf("Reason =\n%s\nwant\n%s", got, c.want)
			}
		})
	}
	if got := Reason(Result{Stderr: []byte("error: " + strings.Repeat("x", 3*maxReason))}); len(got) > maxReason+len("…") {
		t.Errorf("Reason is %d bytes", len(got))
	}
}

func TestExitErrorBrief(t *testing.T) {
	t.Parallel()
	c := Cmd{Name: "kubeadm", Args: []string{"init", "--config", "/var/lib/onekube/kubeadm-init.yaml", "--skip-token-print"}}
	e := NewExitError(c, 1, Result{Stderr: []byte(duplicateNode)})
	if got := e.Brief(); !strings.HasPrefix(got, "kubeadm init exited 1: error execution phase kubelet-start: a Node with name") || strings.Contains(got, "--config") {
		t.Errorf("Brief = %q", got)
	}
	if got := (&ExitError{Cmd: "kubectl --kubeconfig x apply", Code: 2}).Brief(); got != "kubectl exited 2" {
		t.Errorf("Brief = %q", got)
	}
}

// FuzzReason: whatever a tool prints, the reason is bounded and never
// carries the secret.
func FuzzReason(f *testing.F) {
	f.Add(preflightCRI, "")
	f.Add(duplicateNode, "error: x")
	f.Add("", "\n\n")
	f.Fuzz(func(t *testing.T, stderr, stdout string) {
		tok := vmcontext.NewSecret("abcdef.0123456789abcdef")
		got := Reason(Result{Stderr: []byte(stderr + tok.Reveal()), Stdout: []byte(stdout)}, tok)
		if len(got) > maxReason+len("…") || strings.Contains(got, tok.Reveal()) {
			t.Fatalf("Reason = %q", got)
		}
	})
}
