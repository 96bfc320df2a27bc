package bundle

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
)

// HashBytes is the lowercase hex sha256 the plan pins a manifest by.
func HashBytes(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Open reads and checks the bundle mounted at dir: the manifest's sha256
// must be wantSHA (the value the owner's plan pins), the manifest must
// parse, every listed file must be a regular file with its sha256, and no
// other executable, symlink or special file may lie anywhere in the tree.
// Files are opened through an os.Root, so no path can leave dir.
func Open(dir, wantSHA string) (Manifest, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return Manifest{}, fmt.Errorf("bundle: %w", err)
	}
	defer root.Close()
	raw, err := readLimited(root, ManifestName, MaxManifestBytes)
	if err != nil {
		return Manifest{}, fmt.Errorf("bundle: %w", err)
	}
	if got := HashBytes(raw); got != wantSHA {
		return Manifest{}, fmt.Errorf("bundle: %s has sha256 %s, the upgrade plan pins %s: not the bundle the owner chose", ManifestName, got, wantSHA)
	}
	m, err := Parse(raw)
	if err != nil {
		return Manifest{}, err
	}
	if err := Verify(root.FS(), m); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// Verify checks fsys against m (see Open).
func Verify(fsys fs.FS, m Manifest) error {
	for p, want := range m.Files {
		got, err := hashFile(fsys, p)
		if err != nil {
			return fmt.Errorf("bundle: %w", err)
		}
		if got != want {
			return fmt.Errorf("bundle: %s has sha256 %s, the manifest says %s", p, got, want)
		}
	}
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("bundle: %w", err)
		}
		if p == "lost+found" && d.IsDir() {
			return fs.SkipDir // mkfs.ext4 makes it; nothing is read from it
		}
		if _, listed := m.Files[p]; listed || p == ManifestName || d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("bundle: %w", err)
		}
		switch {
		case !info.Mode().IsRegular():
			return fmt.Errorf("bundle: %s is a %s, not a listed file", p, info.Mode().Type())
		case info.Mode().Perm()&0o111 != 0:
			return fmt.Errorf("bundle: %s is executable and not in the manifest", p)
		}
		return nil // an unlisted data file is never read
	})
}

func hashFile(fsys fs.FS, p string) (string, error) {
	if path.Clean(p) != p || !fs.ValidPath(p) {
		return "", fmt.Errorf("%s: not a clean relative path", p)
	}
	info, err := fs.Lstat(fsys, p)
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("%s is a %s, not a regular file", p, info.Mode().Type())
	}
	f, err := fsys.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading %s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func readLimited(root *os.Root, name string, limit int64) ([]byte, error) {
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errors.New(name + ": too large")
	}
	return b, nil
}
