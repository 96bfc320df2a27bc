package system

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Root is the directory every path the agent touches is joined to: "/" in a
// VM, a temp dir in tests. Paths are written as absolute system paths
// ("/etc/kubernetes/pki/ca.crt") and resolved with Path.
type Root string

// Path joins p to the root. p is cleaned first, so "../" cannot climb out.
func (r Root) Path(p string) string {
	base := string(r)
	if base == "" {
		base = "/"
	}
	return filepath.Join(base, filepath.Clean("/"+p))
}

// ReadFile reads the file at p under the root.
func (r Root) ReadFile(p string) ([]byte, error) { return os.ReadFile(r.Path(p)) }

// Exists reports whether p exists under the root.
func (r Root) Exists(p string) (bool, error) {
	_, err := os.Stat(r.Path(p))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// MkdirAll creates p and its parents with perm.
func (r Root) MkdirAll(p string, perm fs.FileMode) error { return os.MkdirAll(r.Path(p), perm) }

// WriteFile writes data to p atomically: a temp file in the same directory,
// fsynced, chmodded, then renamed over p. A crash leaves either the old file
// or the new one, never a torn state or sentinel file. Parents are created
// with mode 0755 unless they exist.
func (r Root) WriteFile(p string, data []byte, perm fs.FileMode) error {
	dst := r.Path(p)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	// Chmod before writing, so a secret never sits in a wider-mode file.
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dst))
}

// Remove deletes p; a missing file is not an error.
func (r Root) Remove(p string) error {
	err := os.Remove(r.Path(p))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// syncDir makes a rename durable across a power cut.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !strings.Contains(err.Error(), "invalid argument") {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
