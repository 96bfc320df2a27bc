package state

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// LockFile is held by the one agent working on a root. A manual
// `onekube-agent bootstrap` while the unit runs must not run kubeadm a
// second time on the same node.
const LockFile = Dir + "/agent.lock"

// ErrLocked means another agent holds the lock.
var ErrLocked = errors.New("another onekube-agent is running on this node")

// Lock takes the agent lock without waiting (flock(2): the kernel drops it
// when the holder dies, so a crash never leaves it stale) and writes the
// holder's PID into it for the error the next one gets. The returned
// function releases it.
func (st Store) Lock() (func(), error) {
	if err := st.Root.MkdirAll(Dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating state directory: %w", err)
	}
	f, err := os.OpenFile(st.Root.Path(LockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", LockFile, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := "unknown"
		if b, rerr := os.ReadFile(f.Name()); rerr == nil && strings.TrimSpace(string(b)) != "" {
			holder = strings.TrimSpace(string(b))
		}
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (PID %s holds %s); wait for it, or see `systemctl status onekube-bootstrap`", ErrLocked, holder, LockFile)
		}
		return nil, fmt.Errorf("locking %s: %w", LockFile, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
