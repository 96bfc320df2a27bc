package access

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs f and fails the test if it has not returned after d: a
// write into a named pipe must be refused, never hang.
func within(t *testing.T, d time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("still running after %s", d)
		return nil
	}
}

// noLocks fails if a .lock file is left in any of dirs.
func noLocks(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		m, _ := filepath.Glob(filepath.Join(d, "*.lock"))
		if len(m) > 0 {
			t.Errorf("lock left behind: %v", m)
		}
	}
}

// A kubeconfig path (or the file a symlink there names) that is not a
// regular file is refused before anything is read, locked or written: a
// named pipe would block the read forever, and a rename over a device
// node would replace the device with a 0600 file holding the key.
func TestUpdateFileRefusesNonRegular(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		make func(t *testing.T, dir string) (string, bool) // the target; false: skip
		kind os.FileMode
	}{
		{"fifo", func(t *testing.T, dir string) (string, bool) {
			p := filepath.Join(dir, "fifo")
			return p, syscall.Mkfifo(p, 0o600) == nil
		}, os.ModeNamedPipe},
		{"socket", func(t *testing.T, dir string) (string, bool) {
			p := filepath.Join(dir, "sock")
			l, err := net.Listen("unix", p)
			if err != nil {
				return p, false
			}
			t.Cleanup(func() { l.Close() })
			return p, true
		}, os.ModeSocket},
		{"directory", func(t *testing.T, dir string) (string, bool) {
			p := filepath.Join(dir, "d")
			return p, os.Mkdir(p, 0o700) == nil
		}, os.ModeDir},
		{"char device", func(t *testing.T, dir string) (string, bool) {
			// /dev/null's numbers (1, 3), made here: never the real one.
			p := filepath.Join(dir, "null")
			return p, syscall.Mknod(p, syscall.S_IFCHR|0o600, 1<<8|3) == nil
		}, os.ModeDevice | os.ModeCharDevice},
	} {
		for _, viaLink := range []bool{false, true} {
			name := tc.name
			if viaLink {
				name = "symlink to " + name
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				tdir, ldir := t.TempDir(), t.TempDir()
				target, ok := tc.make(t, tdir)
				if !ok {
					t.Skipf("cannot make a %s here", tc.name)
				}
				if tc.kind&os.ModeNamedPipe != 0 {
					// Unblock a reader the unfixed code leaves hanging.
					t.Cleanup(func() {
						if w, err := os.OpenFile(target, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
							w.Close()
						}
					})
				}
				path := target
				if viaLink {
					path = filepath.Join(ldir, "config")
					if err := os.Symlink(target, path); err != nil {
						t.Fatal(err)
					}
				}
				called := false
				err := within(t, 5*time.Second, func() error {
					return UpdateFile(path, func(old []byte) ([]byte, error) {
						called = true
						return Merge(old, testEntry())
					})
				})
				if err == nil || !strings.Contains(err.Error(), "not a regular file") {
					t.Errorf("err %v, want a refusal", err)
				}
				if called {
					t.Error("the merge ran")
				}
				if fi, err := os.Lstat(target); err != nil || fi.Mode().Type() != tc.kind.Type() {
					t.Errorf("the %s was replaced: %v %v", tc.name, fi.Mode(), err)
				}
				noLocks(t, tdir, ldir)
				if _, err := ReadKubeconfig(path); err == nil || !strings.Contains(err.Error(), "not a regular file") {
					t.Errorf("ReadKubeconfig: %v", err)
				}
			})
		}
	}
}

// A symlink to a regular file is followed: the link stays, the file it
// names is rewritten atomically with mode 0600.
func TestUpdateFileFollowsSymlinkToFile(t *testing.T) {
	t.Parallel()
	real := filepath.Join(t.TempDir(), "real")
	if err := os.WriteFile(real, []byte(userKubeconfig), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "config")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := UpdateFile(link, func(old []byte) ([]byte, error) { return Merge(old, testEntry()) }); err != nil {
		t.Fatal(err)
	}
	li, _ := os.Lstat(link)
	fi, _ := os.Stat(real)
	if li.Mode()&os.ModeSymlink == 0 || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Errorf("link %v, file %v", li.Mode(), fi.Mode())
	}
	b, err := ReadKubeconfig(link)
	if err != nil || !strings.Contains(string(b), "alice@lab-12") {
		t.Errorf("read back: %v\n%s", err, b)
	}
	noLocks(t, filepath.Dir(real), filepath.Dir(link))
}

// kubectl's lock (path+".lock", empty) is waited for, for a bounded time:
// a lock released meanwhile lets the write through; one that stays (a
// crashed run's) ends in ErrLocked naming the file to remove, which is
// left alone. Through a symlink both the link's lock (kubectl locks the
// path it was given) and the file's are honoured.
func TestUpdateFileLock(t *testing.T) {
	t.Parallel()
	merge := func(old []byte) ([]byte, error) { return Merge(old, testEntry()) }
	t.Run("released while waiting", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "config")
		if err := os.WriteFile(path+".lock", nil, 0o600); err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(150*time.Millisecond, func() { os.Remove(path + ".lock") })
		if err := within(t, 5*time.Second, func() error { return updateFile(path, 3*time.Second, merge) }); err != nil {
			t.Fatalf("err %v", err)
		}
		if b, _ := os.ReadFile(path); !strings.Contains(string(b), "alice@lab-12") {
			t.Error("not written")
		}
		noLocks(t, filepath.Dir(path))
	})
	for _, tc := range []struct {
		name   string
		link   bool
		locked func(path, target string) string
	}{
		{"stale", false, func(path, _ string) string { return path + ".lock" }},
		{"the link's", true, func(path, _ string) string { return path + ".lock" }},
		{"the file's", true, func(_, target string) string { return target + ".lock" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			target := filepath.Join(t.TempDir(), "config")
			if err := os.WriteFile(target, []byte(userKubeconfig), 0o600); err != nil {
				t.Fatal(err)
			}
			path := target
			if tc.link {
				path = filepath.Join(t.TempDir(), "config")
				if err := os.Symlink(target, path); err != nil {
					t.Fatal(err)
				}
			}
			lock := tc.locked(path, target)
			if err := os.WriteFile(lock, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			err := within(t, 5*time.Second, func() error { return updateFile(path, 300*time.Millisecond, merge) })
			if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), lock) || !strings.Contains(err.Error(), "remove") {
				t.Errorf("err %v", err)
			}
			if waited := time.Since(start); waited < 250*time.Millisecond {
				t.Errorf("gave up after %s without waiting", waited)
			}
			if _, err := os.Stat(lock); err != nil {
				t.Errorf("someone else's lock was removed: %v", err)
			}
			if b, _ := os.ReadFile(target); string(b) != userKubeconfig {
				t.Error("a locked file was written")
			}
			os.Remove(lock)
			noLocks(t, filepath.Dir(path), filepath.Dir(target))
		})
	}
}
