package testbed

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// DefaultVersion is the Kubernetes release of the bed; it matches the
// k8s.io/kubernetes pin in go.mod and the kubeadm oracle.
const DefaultVersion = "v1.37.2"

// K8sBinaries are the real programs build.sh produces, by file name.
var K8sBinaries = []string{"kubeadm", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "etcd"}

// Binaries are every program the bed runs.
type Binaries struct {
	Version  string // Kubernetes release, e.g. v1.37.2
	K8sDir   string // holds K8sBinaries
	Agent    string // onekube-agent
	Daemon   string // onekubed (serve, lb, leave)
	FakeNode string
	VMInit   string
}

// CacheDir is where build.sh puts a release's binaries:
// $ONEKUBE_CACHE (default ~/.cache/onekube)/testbed-<version>.
func CacheDir(version string) (string, error) {
	root := os.Getenv("ONEKUBE_CACHE")
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("finding the cache directory: %w", err)
		}
		root = filepath.Join(home, ".cache", "onekube")
	}
	return filepath.Join(root, "testbed-"+version), nil
}

// LocateK8s finds the real binaries of version: $ONEKUBE_TESTBED_BIN when
// its kubeadm is that release, else the cache directory of the version. A
// bed at another release than the default (a cluster to upgrade from) must
// not pick up the default's binaries because the variable names them. It
// names what is missing and how to build it.
func LocateK8s(version string) (string, error) {
	if dir := os.Getenv("ONEKUBE_TESTBED_BIN"); dir != "" {
		if got, err := kubeadmVersion(dir); err == nil && got == version {
			return dir, nil
		}
	}
	dir, err := CacheDir(version)
	if err != nil {
		return "", err
	}
	var missing []string
	for _, b := range K8sBinaries {
		if st, err := os.Stat(filepath.Join(dir, b)); err != nil || st.Mode()&0o111 == 0 {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("%s lacks %s: run `make testbed KUBEADM_TAG=%s` (agent/testbed/build.sh %s %s)",
			dir, strings.Join(missing, ", "), version, version, dir)
	}
	got, err := kubeadmVersion(dir)
	if err != nil {
		return "", err
	}
	if got != version {
		return "", fmt.Errorf("%s holds kubeadm %s, not %s: remove it and run `make testbed KUBEADM_TAG=%s`", dir, got, version, version)
	}
	return dir, nil
}

// kubeadmVersion is what dir's kubeadm says it is (build.sh stamps the
// tag into every binary).
func kubeadmVersion(dir string) (string, error) {
	out, err := exec.Command(filepath.Join(dir, "kubeadm"), "version", "-o", "short").Output()
	if err != nil {
		return "", fmt.Errorf("%s/kubeadm version: %w", dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// BuildTools compiles onekube-agent, onekubed, fakenode and vminit into dir
// with one go build, from the module the go command finds.
func BuildTools(dir string) (Binaries, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return Binaries{}, fmt.Errorf("finding the module root: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return Binaries{}, errors.New("not inside the onekube module")
	}
	cmd := exec.Command("go", "build", "-trimpath", "-o", dir+"/",
		"./cmd/onekube-agent", "./cmd/onekubed", "./agent/testbed/fakenode", "./agent/testbed/vminit")
	cmd.Dir = filepath.Dir(mod)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return Binaries{}, fmt.Errorf("go build of the agent, onekubed and the bed's tools: %w\n%s", err, buf.String())
	}
	return Binaries{
		Agent:    filepath.Join(dir, "onekube-agent"),
		Daemon:   filepath.Join(dir, "onekubed"),
		FakeNode: filepath.Join(dir, "fakenode"),
		VMInit:   filepath.Join(dir, "vminit"),
	}, nil
}

// Prepare locates the real binaries of version and builds the tools into
// dir.
func Prepare(version, dir string) (Binaries, error) {
	k8s, err := LocateK8s(version)
	if err != nil {
		return Binaries{}, err
	}
	b, err := BuildTools(dir)
	if err != nil {
		return Binaries{}, err
	}
	b.Version, b.K8sDir = version, k8s
	return b, nil
}
