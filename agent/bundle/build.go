package bundle

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
)

// FromDir builds the manifest of the bundle tree at dir (bin/ and
// images/ as the make target lays them out), hashing every file.
func FromDir(dir, version string) (Manifest, error) {
	fsys := os.DirFS(dir)
	m := Manifest{KubernetesVersion: version, Files: map[string]string{}}
	var paths []string
	for _, b := range Binaries {
		paths = append(paths, b)
	}
	imgs, err := fs.Glob(fsys, "images/*.tar")
	if err != nil {
		return Manifest{}, err
	}
	sort.Strings(imgs)
	paths = append(paths, imgs...)
	for _, p := range paths {
		h, err := hashFile(fsys, path.Clean(p))
		if err != nil {
			return Manifest{}, fmt.Errorf("bundle: %w", err)
		}
		m.Files[p] = h
	}
	return m, m.Validate()
}
