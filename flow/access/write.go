package access

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrLocked: another program holds the kubeconfig's lock file.
var ErrLocked = errors.New("kubeconfig is locked")

// UpdateFile rewrites the file at path with f(old) (old is nil when the
// file does not exist), atomically and with mode 0600: the new content
// goes to a temporary file in the same directory, is synced, and renamed
// over the old one, so a failure at any point leaves the old file whole
// and no partial one. A symbolic link is followed, so the link survives.
// While it works it holds path+".lock", the lock kubectl's clientcmd
// takes (client-go tools/clientcmd/loader.go lockFile, v0.36.3), so a
// concurrent `kubectl config` write is refused rather than lost.
func UpdateFile(path string, f func(old []byte) ([]byte, error)) error {
	target, err := resolve(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	lock := target + ".lock"
	lf, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: %s exists (kubectl or another onekube-flow is writing %s; remove the lock if it is stale)", ErrLocked, lock, target)
	}
	if err != nil {
		return fmt.Errorf("locking %s: %w", target, err)
	}
	_ = lf.Close()
	defer os.Remove(lock)

	old, err := readBounded(target)
	if err != nil {
		return err
	}
	data, err := f(old)
	if err != nil {
		return err
	}
	return writeAtomic(target, data)
}

// resolve follows a symbolic link at path to the file it names.
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
			return "", fmt.Errorf("%s is not a regular file", path)
		}
		return path, nil
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%s is a symbolic link that leads nowhere: %w", path, err)
	}
	return target, nil
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
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
