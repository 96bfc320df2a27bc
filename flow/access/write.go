package access

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// ErrNotRegular: the kubeconfig path (or the file a symbolic link there
// names) is a named pipe, a device, a socket or a directory. Reading a
// pipe would block forever, and renaming over a device node would replace
// the device with a file holding the key, so such a path is refused.
var ErrNotRegular = errors.New("not a regular file")

// UpdateFile rewrites the file at path with f(old) (old is nil when the
// file does not exist), atomically and with mode 0600: the new content
// goes to a temporary file in the same directory, is synced, and renamed
// over the old one, so a failure at any point leaves the old file whole
// and no partial one. A symbolic link is followed, so the link survives;
// what it names must be a regular file (ErrNotRegular). While it works it
// holds kubectl's lock (lock.go), waiting DefaultLockWait at most for it.
func UpdateFile(path string, f func(old []byte) ([]byte, error)) error {
	return updateFile(path, DefaultLockWait, f)
}

func updateFile(path string, wait time.Duration, f func(old []byte) ([]byte, error)) error {
	target, err := resolve(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	unlock, err := lockFiles(path, target, wait)
	if err != nil {
		return err
	}
	defer unlock()

	old, err := readRegular(target)
	if err != nil {
		return err
	}
	data, err := f(old)
	if err != nil {
		return err
	}
	return writeAtomic(target, data)
}

// ReadKubeconfig reads the kubeconfig at path as UpdateFile would: through
// a symbolic link, refusing what is not a regular file, bounded; nil when
// there is none.
func ReadKubeconfig(path string) ([]byte, error) {
	target, err := resolve(path)
	if err != nil {
		return nil, err
	}
	return readRegular(target)
}

// resolve follows a symbolic link at path to the file it names, and
// refuses anything there but a regular file or nothing.
func resolve(path string) (string, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, nil
	}
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("%s is %s: %w", path, kind(fi.Mode()), ErrNotRegular)
		}
		return path, nil
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%s is a symbolic link that leads nowhere: %w", path, err)
	}
	ti, err := os.Lstat(target)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", target, err)
	}
	if !ti.Mode().IsRegular() {
		return "", fmt.Errorf("%s is a symbolic link to %s, which is %s: %w", path, target, kind(ti.Mode()), ErrNotRegular)
	}
	return target, nil
}

// kind names a file type for an error.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return "of mode " + m.String()
}

// readRegular reads the regular file at path, bounded. resolve checked
// its type; the open does not block even if a pipe has taken the file's
// place since (O_NONBLOCK, which regular files ignore), and the check is
// made again on what was opened.
func readRegular(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s: %w", path, kind(fi.Mode()), ErrNotRegular)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxKubeconfig+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(b) > MaxKubeconfig {
		return nil, fmt.Errorf("%s: %w: larger than %d MiB", path, ErrNotKubeconfig, MaxKubeconfig>>20)
	}
	return b, nil
}

// writeAtomic replaces path with data, mode 0600.
func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".onekube-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(0o600); err == nil {
		if _, err = tmp.Write(data); err == nil {
			err = tmp.Sync()
		}
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	_ = syncDir(dir)
	return nil
}
