package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"

	vmcontext "github.com/onekube/onekube/context"
)

// CNINone turns the CNI phase off (the user installs one later).
const CNINone = "none"

func wantsCNI(d Data) (bool, error) {
	name := d.Config().CNI
	return name != "" && name != CNINone, nil
}

// installCNI applies the chosen CNI manifest the image carries, set up for
// the pod network and pinned to the node's interface (cnipatch.go), using
// the admin kubeconfig init wrote.
func installCNI(ctx context.Context, d Data) error {
	cfg := d.Config()
	if !validCNIName(cfg.CNI) {
		return fmt.Errorf("CNI name %q is not a plain name (a-z, 0-9, '-')", cfg.CNI)
	}
	src := path.Join(d.Settings().CNIDir, cfg.CNI+".yaml")
	manifest, err := d.Root().ReadFile(src)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s (the image carries no manifest for %s=%q)", ErrNoCNIManifest, src, vmcontext.KeyCNI, cfg.CNI)
	}
	if err != nil {
		return fmt.Errorf("reading CNI manifest: %w", err)
	}
	if manifest, err = patchManifest(cfg.CNI, manifest, cfg.PodsNetwork); err != nil {
		return err
	}
	dst := "/var/lib/onekube/cni-" + cfg.CNI + ".yaml"
	if err := d.Root().WriteFile(dst, manifest, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	return kubectlApply(ctx, d, "the CNI manifest", d.Root().Path(dst), nil)
}

func validCNIName(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
