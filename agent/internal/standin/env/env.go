// Package env is the plumbing the stand-in binaries (kubeadm, kubectl) share:
// the environment variables that steer them, the per-node root they write
// under, their invocation log and their fault injection. It is test tooling;
// nothing in the product imports it.
package env

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Environment variables read by the stand-ins.
const (
	// VarRoot is the directory standing in for "/" (required for commands
	// that write: the stand-ins never touch the real /etc).
	VarRoot = "ONEKUBE_STANDIN_ROOT"
	// VarLog names a file each invocation appends one JSON line to.
	VarLog = "ONEKUBE_STANDIN_LOG"
	// VarFail injects failures: "init", "join", "join:2" (the first 2 joins
	// fail), "cri" (init and join fail preflight with kubeadm's and
	// crictl's words for a container runtime that is not running), several
	// comma-separated.
	VarFail = "ONEKUBE_STANDIN_FAIL"
	// VarDelay makes init and join take this long (a Go duration), spent
	// where kubeadm spends its time: init waiting for the control plane
	// (files written, API server up), join waiting for the kubelet's TLS
	// bootstrap (Node registered). A kill then leaves what a killed
	// kubeadm leaves.
	VarDelay = "ONEKUBE_STANDIN_DELAY"
	// VarVersion is what `kubeadm version` reports (default DefaultVersion).
	VarVersion = "ONEKUBE_STANDIN_VERSION"
	// VarNet is the simulated network: a directory where <ip> links to the
	// root of the host with that address (see nodes.go). Join and kubectl
	// reach the API server through it.
	VarNet = "ONEKUBE_STANDIN_NET"
	// VarNodeGrace is how long a Node stays Ready after its kubelet stopped
	// (a Go duration; default DefaultNodeGrace, see Node.Ready).
	VarNodeGrace = "ONEKUBE_STANDIN_NODE_GRACE"
)

// DefaultNodeGrace is kube-controller-manager's default
// node-monitor-grace-period (unchanged in 1.37).
const DefaultNodeGrace = 50 * time.Second

// DefaultVersion is the kubeadm release the stand-in pretends to be.
const DefaultVersion = "v1.37.2"

// StateDir (under the root) holds the stand-ins' own bookkeeping: fault
// counters and the node registry.
const StateDir = "/var/lib/onekube-standin"

// Root returns the stand-in root from VarRoot. It must be an absolute path
// other than "/", so a misconfigured test fails instead of writing to /etc.
func Root() (string, error) {
	r := os.Getenv(VarRoot)
	switch {
	case r == "":
		return "", fmt.Errorf("%s is not set: the stand-in refuses to write to the real /etc", VarRoot)
	case !filepath.IsAbs(r):
		return "", fmt.Errorf("%s=%q is not an absolute path", VarRoot, r)
	case filepath.Clean(r) == "/":
		return "", fmt.Errorf("%s=/ would write to the real /etc; use a temp dir", VarRoot)
	}
	return filepath.Clean(r), nil
}

// Path joins a system path ("/etc/kubernetes/admin.conf") to root.
func Path(root, p string) string { return filepath.Join(root, filepath.Clean("/"+p)) }

// Resolve finds a file named on the command line. Callers pass either the
// real path (a root-joined temp path in tests) or the path as it would be in
// the VM; the latter is looked up under root.
func Resolve(root, p string) string {
	if _, err := os.Stat(p); err == nil || root == "" {
		return p
	}
	if alt := Path(root, p); fileExists(alt) {
		return alt
	}
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Version is the release the stand-in reports.
func Version() string {
	if v := os.Getenv(VarVersion); v != "" {
		return v
	}
	return DefaultVersion
}

// Delay sleeps for VarDelay, if set.
func Delay() error {
	s := os.Getenv(VarDelay)
	if s == "" {
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("%s=%q is not a duration", VarDelay, s)
	}
	time.Sleep(d)
	return nil
}

// ShouldFail reports whether this run of cmd must fail per VarFail. A rule
// "cmd" fails every run; "cmd:N" fails the first N runs, counted in a file
// under root so the count survives across processes.
func ShouldFail(root, cmd string) (bool, error) {
	spec := os.Getenv(VarFail)
	if spec == "" {
		return false, nil
	}
	for _, rule := range strings.Split(spec, ",") {
		name, n, hasN := strings.Cut(strings.TrimSpace(rule), ":")
		if name != cmd {
			continue
		}
		if !hasN {
			return true, nil
		}
		var limit int
		if _, err := fmt.Sscanf(n, "%d", &limit); err != nil || limit < 0 {
			return false, fmt.Errorf("%s rule %q: want CMD or CMD:N", VarFail, rule)
		}
		count, err := bump(Path(root, StateDir+"/fail-"+cmd+".count"))
		if err != nil {
			return false, err
		}
		return count <= limit, nil
	}
	return false, nil
}

// bump increments the counter in file and returns the new value.
func bump(file string) (int, error) {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return 0, err
	}
	n := 0
	b, err := os.ReadFile(file)
	switch {
	case err == nil:
		if _, err := fmt.Sscanf(string(b), "%d", &n); err != nil {
			return 0, fmt.Errorf("reading counter %s: %w", file, err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return 0, err
	}
	n++
	return n, os.WriteFile(file, []byte(fmt.Sprintf("%d\n", n)), 0o600)
}
