package access

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrLocked: another program holds the kubeconfig's lock file.
var ErrLocked = errors.New("kubeconfig is locked")

// DefaultLockWait is how long UpdateFile waits for a lock: kubectl holds
// it only while it writes the file (milliseconds), so a lock still there
// after this is most likely left by a program that died holding it.
const DefaultLockWait = 5 * time.Second

// lockPoll is the pause between attempts while waiting.
const lockPoll = 50 * time.Millisecond

// lockFiles takes kubectl's lock, FILE.lock made with O_EXCL and removed
// when done (client-go tools/clientcmd/loader.go lockFile, v0.36.3), for
// path and, when path is a symbolic link, for the file it names too:
// kubectl locks the path it was given, whichever of the two that was.
// Both are taken in sorted order, as ModifyConfig does (config.go).
// Nothing here removes a lock it did not make: whether its owner is dead
// cannot be told safely (the file may be on a shared home, written from
// another host), so the error names the file to remove instead.
func lockFiles(path, target string, wait time.Duration) (unlock func(), err error) {
	names := []string{path + ".lock"}
	if target != path {
		names = append(names, target+".lock")
	}
	slices.Sort(names)
	deadline := time.Now().Add(wait)
	var held []string
	unlock = func() {
		for _, n := range held {
			_ = os.Remove(n)
		}
	}
	for _, n := range names {
		if err := lockOne(n, path, deadline); err != nil {
			unlock()
			return nil, err
		}
		held = append(held, n)
	}
	return unlock, nil
}

func lockOne(name, path string, deadline time.Time) error {
	for {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			// Who holds it, for the message another run may print.
			_, werr := fmt.Fprintf(f, "onekube-flow pid %d\n", os.Getpid())
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				_ = os.Remove(name)
				return fmt.Errorf("locking %s: %w", path, werr)
			}
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("locking %s: %w", path, err)
		}
		if !time.Now().Before(deadline) {
			return lockedError(name, path)
		}
		time.Sleep(min(lockPoll, time.Until(deadline)+time.Millisecond))
	}
}

// lockedError says which lock file blocks path, how old it is and who
// made it when it says so, and how to clear it.
func lockedError(name, path string) error {
	age, who := "", "kubectl or another onekube-flow"
	if fi, err := os.Lstat(name); err == nil {
		age = " for " + time.Since(fi.ModTime()).Round(time.Second).String()
		if fi.Mode().IsRegular() && fi.Size() < 64 {
			if b, err := os.ReadFile(name); err == nil {
				if pid, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "onekube-flow pid "); ok {
					if _, err := strconv.Atoi(pid); err == nil {
						who = "onekube-flow (pid " + pid + ")"
					}
				}
			}
		}
	}
	return fmt.Errorf("%w: %s has existed%s: %s is writing %s, or died while it did; if none is running, remove the lock (rm %s) and run again",
		ErrLocked, name, age, who, path, name)
}
