package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/onekube/onekube/agent/internal/standin/env"
)

// Files the stand-in writes, as VM paths; they are joined to the root.
const (
	caCertFile      = "/etc/kubernetes/pki/ca.crt"
	caKeyFile       = "/etc/kubernetes/pki/ca.key"
	adminConfFile   = "/etc/kubernetes/admin.conf"
	kubeletConfFile = "/etc/kubernetes/kubelet.conf"
	manifestsDir    = "/etc/kubernetes/manifests"
)

var staticPods = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}

func writeFile(root, p string, data []byte, perm os.FileMode) error {
	dst := env.Path(root, p)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(dst, data, perm); err != nil {
		return err
	}
	return os.Chmod(dst, perm) // WriteFile keeps the mode of an existing file
}

// preflight fails as kubeadm's FileAvailable checks do when a file a
// previous init or join left behind is still there, unless waived.
func preflight(root string, o options, files ...string) error {
	var errs []string
	for _, f := range files {
		if _, err := os.Stat(env.Path(root, f)); err != nil {
			continue
		}
		check := "FileAvailable-" + strings.ReplaceAll(f, "/", "-")
		if o.ignored(check) {
			continue
		}
		errs = append(errs, fmt.Sprintf("\t[ERROR %s]: %s already exists", check, f))
	}
	if len(errs) == 0 {
		return nil
	}
	return inPhase("preflight", fmt.Errorf("[preflight] Some fatal errors occurred:\n%s\n[preflight] If you know what you are doing, you can make a check non-fatal with `--ignore-preflight-errors=...`", strings.Join(errs, "\n")))
}

func manifestFiles() []string {
	var out []string
	for _, p := range staticPods {
		out = append(out, manifestsDir+"/"+p+".yaml")
	}
	return out
}

// staticPod is a minimal Pod manifest, so the manifests directory looks as
// kubeadm leaves it (and reset has something to remove).
func staticPod(name, version string) []byte {
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %[1]s
  namespace: kube-system
  labels:
    component: %[1]s
    tier: control-plane
spec:
  hostNetwork: true
  containers:
  - name: %[1]s
    image: registry.k8s.io/%[1]s:%[2]s
`, name, version))
}
