package loopback

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Tag is the Kubernetes release the binaries are built at; it matches the
// k8s.io/kubernetes pin in go.mod.
const Tag = "v1.37.2"

// Binaries are the paths of the control-plane programs.
type Binaries struct {
	Etcd, APIServer, ControllerManager string
}

// ErrNoBinaries means the control-plane binaries are not built here.
var ErrNoBinaries = errors.New("control-plane binaries not found (run `make testbed`)")

// FindBinaries looks in $ONEKUBE_TESTBED_BIN, then in
// ~/.cache/onekube/testbed-<Tag>.
func FindBinaries() (Binaries, error) {
	dir := os.Getenv("ONEKUBE_TESTBED_BIN")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return Binaries{}, fmt.Errorf("%w: %v", ErrNoBinaries, err)
		}
		dir = filepath.Join(home, ".cache", "onekube", "testbed-"+Tag)
	}
	b := Binaries{
		Etcd:              filepath.Join(dir, "etcd"),
		APIServer:         filepath.Join(dir, "kube-apiserver"),
		ControllerManager: filepath.Join(dir, "kube-controller-manager"),
	}
	for _, p := range []string{b.Etcd, b.APIServer, b.ControllerManager} {
		if fi, err := os.Stat(p); err != nil || fi.Mode()&0o111 == 0 {
			return Binaries{}, fmt.Errorf("%w: %s", ErrNoBinaries, p)
		}
	}
	return b, nil
}
