package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// imageStore is the node's image store, as containerd's k8s.io namespace
// is: one directory per image reference, <root>/<ref>/, holding image.json
// (the reference and its ID) and rootfs/ (the unpacked layers). An image
// the store lacks cannot run: a container's command is looked up in its
// image's rootfs, on the image's PATH. The bed preloads the images of the
// VM's release (as the appliance preloads them); `ctr images import` (this
// program as ctr) adds more.
type imageStore struct{ root string }

// imageMeta is image.json.
type imageMeta struct {
	Ref  string `json:"ref"`
	ID   string `json:"id"`
	Size uint64 `json:"size"`
}

// refPattern is a tagged image reference, e.g.
// registry.k8s.io/kube-apiserver:v1.37.2 or
// registry.k8s.io/coredns/coredns:v1.14.6. Digests are not played.
var refPattern = regexp.MustCompile(`^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)+:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// checkRef refuses what is not a tagged reference, so a reference from an
// archive can never name a path outside the store.
func checkRef(ref string) error {
	if !refPattern.MatchString(ref) || strings.Contains(ref, "..") {
		return fmt.Errorf("%q is not a tagged image reference (host/name:tag)", ref)
	}
	return nil
}

func (s imageStore) dir(ref string) (string, error) {
	if err := checkRef(ref); err != nil {
		return "", err
	}
	return filepath.Join(s.root, filepath.FromSlash(ref)), nil
}

// lookup returns the stored image of ref.
func (s imageStore) lookup(ref string) (imageMeta, bool) {
	dir, err := s.dir(ref)
	if err != nil {
		return imageMeta{}, false
	}
	b, err := os.ReadFile(filepath.Join(dir, "image.json"))
	if err != nil {
		return imageMeta{}, false
	}
	var m imageMeta
	if json.Unmarshal(b, &m) != nil || m.Ref != ref {
		return imageMeta{}, false
	}
	return m, true
}

// list returns every stored image, sorted by reference.
func (s imageStore) list() []imageMeta {
	var out []imageMeta
	_ = filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "image.json" || strings.Contains(p, "/rootfs/") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		var m imageMeta
		if json.Unmarshal(b, &m) == nil && m.Ref != "" {
			if got, ok := s.lookup(m.Ref); ok {
				out = append(out, got)
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Ref < out[j].Ref })
	return out
}

// imagePath is the PATH of the Kubernetes images (distroless and the
// etcd image keep their binaries in /usr/local/bin).
var imagePath = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// binary finds a container's command in its image, as runc does on the
// image's PATH; the errors are containerd's and runc's.
func (s imageStore) binary(ref, cmd string) (string, error) {
	if _, ok := s.lookup(ref); !ok {
		return "", fmt.Errorf("failed to get image %q: image %q: not found", ref, ref)
	}
	dir, _ := s.dir(ref)
	rootfs := filepath.Join(dir, "rootfs")
	candidates := []string{cmd}
	if !strings.HasPrefix(cmd, "/") {
		if strings.Contains(cmd, "/") {
			return "", fmt.Errorf("exec: %q: relative command paths are not played", cmd)
		}
		candidates = nil
		for _, d := range imagePath {
			candidates = append(candidates, path.Join(d, cmd))
		}
	}
	for _, c := range candidates {
		p := filepath.Join(rootfs, filepath.FromSlash(path.Clean(c)))
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH of image %s", cmd, ref)
}

// remove deletes an image.
func (s imageStore) remove(ref string) error {
	dir, err := s.dir(ref)
	if err != nil {
		return err
	}
	if _, ok := s.lookup(ref); !ok {
		return fmt.Errorf("image %q: not found", ref)
	}
	return os.RemoveAll(dir)
}

// put installs an unpacked rootfs as ref, replacing any image of that
// name: the staging directory is renamed into place, so a reader sees the
// old image or the new one, never half of one.
func (s imageStore) put(ref, id string, size uint64, rootfs string) error {
	dir, err := s.dir(ref)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	stage, err := os.MkdirTemp(filepath.Dir(dir), ".import-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	if err := os.Rename(rootfs, filepath.Join(stage, "rootfs")); err != nil {
		return err
	}
	b, _ := json.Marshal(imageMeta{Ref: ref, ID: id, Size: size})
	if err := os.WriteFile(filepath.Join(stage, "image.json"), b, 0o644); err != nil {
		return err
	}
	old := dir + ".old"
	_ = os.RemoveAll(old)
	if err := os.Rename(dir, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		// A preloaded image lives in the image's lower layer, and
		// overlayfs cannot rename a lower directory (EXDEV): replace it
		// in place instead.
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	if err := os.Rename(stage, dir); err != nil {
		return err
	}
	return os.RemoveAll(old)
}
