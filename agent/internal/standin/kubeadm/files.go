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
	caCertFile        = "/etc/kubernetes/pki/ca.crt"
	caKeyFile         = "/etc/kubernetes/pki/ca.key"
	pkiDir            = "/etc/kubernetes/pki"
	adminConfFile     = "/etc/kubernetes/admin.conf"
	superAdminConf    = "/etc/kubernetes/super-admin.conf"
	kubeletConfFile   = "/etc/kubernetes/kubelet.conf"
	bootstrapConf     = "/etc/kubernetes/bootstrap-kubelet.conf"
	controllerMgrConf = "/etc/kubernetes/controller-manager.conf"
	schedulerConf     = "/etc/kubernetes/scheduler.conf"
	manifestsDir      = "/etc/kubernetes/manifests"
	etcdDataDir       = "/var/lib/etcd"
	kubeletDir        = "/var/lib/kubelet"
	kubeletConfig     = kubeletDir + "/config.yaml"
	kubeletFlagsFile  = kubeletDir + "/kubeadm-flags.env"
)

// kubeconfigFiles are the kubeconfigs kubeadm reset deletes
// (cmd/kubeadm/app/cmd/phases/reset/cleanupnode.go, resetConfigDir).
var kubeconfigFiles = []string{adminConfFile, superAdminConf, kubeletConfFile, bootstrapConf, controllerMgrConf, schedulerConf}

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

// criDown is what kubeadm's CRI check said while it shelled out to
// crictl (its ContainerRuntimeCheck wraps crictl's output): quotes, '='
// and an escaped endpoint, on two lines, as a real report gets it.
const criDown = `container runtime is not running: output: time="2026-11-22T10:00:00Z" level=fatal msg="validate service connection: validate CRI v1 runtime API for endpoint \"unix:///var/run/containerd/containerd.sock\": rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing: dial unix /var/run/containerd/containerd.sock: connect: no such file or directory\""
, error: exit status 1`

// preflightError is a failed preflight: kubeadm prints each error on its
// own "[ERROR <check>]: ..." line to stderr, then fails the phase with a
// short message (cmd/kubeadm/app/preflight/checks.go RunChecks).
type preflightError struct{ errs []string }

func (p *preflightError) Error() string { return "preflight checks failed" }

// report is the block kubeadm writes before the phase error.
func (p *preflightError) report() string {
	var b strings.Builder
	b.WriteString("[preflight] Some fatal errors occurred:\n")
	for _, e := range p.errs {
		b.WriteString("\t" + e + "\n")
	}
	b.WriteString("[preflight] If you know what you are doing, you can make a check non-fatal with `--ignore-preflight-errors=...`")
	return b.String()
}

// checks runs kubeadm's preflight checks the stand-in can judge, in
// kubeadm's order, each unless waived (cmd/kubeadm/app/preflight/checks.go:
// InitNodeChecks, JoinNodeChecks, addCommonChecks).
type checks struct {
	root string
	o    options
	errs []string
}

func (c *checks) add(name, msg string) {
	if !c.o.ignored(name) {
		c.errs = append(c.errs, fmt.Sprintf("[ERROR %s]: %s", name, msg))
	}
}

// fileAvailable is FileAvailableCheck: the file must not exist.
func (c *checks) fileAvailable(p string) {
	if fileExists(env.Path(c.root, p)) {
		c.add("FileAvailable-"+strings.ReplaceAll(p, "/", "-"), p+" already exists")
	}
}

// dirAvailable is DirAvailableCheck: the directory is absent or empty.
func (c *checks) dirAvailable(p string) {
	if ents, err := os.ReadDir(env.Path(c.root, p)); err == nil && len(ents) > 0 {
		c.add("DirAvailable-"+strings.ReplaceAll(p, "/", "-"), p+" is not empty")
	}
}

// port is PortOpenCheck: a port a running component holds.
func (c *checks) port(n int, inUse bool) {
	if inUse {
		c.add(fmt.Sprintf("Port-%d", n), fmt.Sprintf("Port %d is in use", n))
	}
}

// cri is ContainerRuntimeCheck, failing when the "cri" fault is injected.
func (c *checks) cri() error {
	down, err := env.ShouldFail(c.root, "cri")
	if err == nil && down {
		c.add("CRI", criDown)
	}
	return err
}

func (c *checks) result() error {
	if len(c.errs) == 0 {
		return nil
	}
	return inPhase("preflight", &preflightError{c.errs})
}

// initPreflight is kubeadm init's: the control plane's ports (taken while
// this host runs one), its static pods, the runtime, the kubelet's port
// (taken while it runs), etcd's ports and data directory.
func initPreflight(root string, o options, bindPort int) error {
	c := &checks{root: root, o: o}
	serving := env.Serving(root)
	c.port(bindPort, serving)
	c.port(10259, serving)
	c.port(10257, serving)
	for _, p := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"} {
		c.fileAvailable(manifestsDir + "/" + p + ".yaml")
	}
	if err := c.cri(); err != nil {
		return err
	}
	c.port(10250, env.KubeletRunning(root))
	c.port(2379, serving)
	c.port(2380, serving)
	c.dirAvailable(etcdDataDir)
	return c.result()
}

// joinPreflight is kubeadm join's: the kubelet's kubeconfigs, the runtime,
// the kubelet's port and, for a worker, the CA.
func joinPreflight(root string, o options, controlPlane bool) error {
	c := &checks{root: root, o: o}
	c.fileAvailable(kubeletConfFile)
	c.fileAvailable(bootstrapConf)
	if err := c.cri(); err != nil {
		return err
	}
	c.port(10250, env.KubeletRunning(root))
	if !controlPlane {
		c.fileAvailable(caCertFile)
	}
	return c.result()
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
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
