package context

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Mounter gives read access to the files of the CONTEXT CD. one-context
// unmounts the CD after boot, so reading context.sh and token.txt again means
// mounting it for a moment.
type Mounter interface {
	// Mount mounts the device labelled CONTEXT read-only and returns the
	// directory holding its files, and release, which unmounts it and removes
	// the directory; release must be called whenever err is nil. Mount returns
	// an error wrapping ErrNoContextDevice when no device has the label.
	Mount(ctx context.Context) (dir string, release func() error, err error)
}

// Tool names, overridable at link time (-X) for distributions that keep them
// elsewhere.
var (
	BlkidCmd  = "blkid"
	MountCmd  = "mount"
	UmountCmd = "umount"
)

// CommandRunner runs a program and returns its standard output. It is the
// seam that keeps tests of CDMounter from needing root.
type CommandRunner func(ctx context.Context, name string, args ...string) ([]byte, error)

// RunCommand is the real CommandRunner. A failure carries the program's
// trimmed standard error, which for blkid and mount never holds secrets.
func RunCommand(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return out, fmt.Errorf("%s: %w: %s", name, err, msg)
		}
		return out, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// CDMounter is the real Mounter: blkid finds the device, mount attaches it
// read-only, nosuid, nodev and noexec under <Root>/run/onekube.
type CDMounter struct {
	Root string        // "" means "/"
	Run  CommandRunner // nil means RunCommand
}

var _ Mounter = CDMounter{}

// mountParent is where CDMounter creates its temporary mount points.
const mountParent = "/run/onekube"

// Mount implements Mounter.
func (m CDMounter) Mount(ctx context.Context) (string, func() error, error) {
	run := m.Run
	if run == nil {
		run = RunCommand
	}
	dev, err := findContextDevice(ctx, run)
	if err != nil {
		return "", nil, err
	}
	parent := rootPath(m.Root, mountParent)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", nil, fmt.Errorf("creating mount point: %w", err)
	}
	dir, err := os.MkdirTemp(parent, "context.")
	if err != nil {
		return "", nil, fmt.Errorf("creating mount point: %w", err)
	}
	if _, err := run(ctx, MountCmd, "-o", "ro,nosuid,nodev,noexec", dev, dir); err != nil {
		return "", nil, errors.Join(fmt.Errorf("mounting %s: %w", dev, err), os.Remove(dir))
	}
	release := func() error {
		// Unmount even when the caller's context is already cancelled:
		// leaving the CD mounted would outlive the agent.
		if _, err := run(context.WithoutCancel(ctx), UmountCmd, dir); err != nil {
			return fmt.Errorf("unmounting %s: %w", dir, err)
		}
		if err := os.Remove(dir); err != nil {
			return fmt.Errorf("removing mount point: %w", err)
		}
		return nil
	}
	return dir, release, nil
}

// findContextDevice asks blkid for the device labelled CONTEXT. blkid exits
// with status 2 when nothing matches; that, or empty output, is
// ErrNoContextDevice.
func findContextDevice(ctx context.Context, run CommandRunner) (string, error) {
	out, err := run(ctx, BlkidCmd, "-l", "-t", "LABEL=CONTEXT", "-o", "device")
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && exitErr.ExitCode() == 2 {
		return "", ErrNoContextDevice
	}
	if err != nil {
		return "", fmt.Errorf("finding the CONTEXT device: %w", err)
	}
	dev := strings.TrimSpace(string(out))
	if dev == "" {
		return "", ErrNoContextDevice
	}
	if i := strings.IndexByte(dev, '\n'); i >= 0 {
		dev = dev[:i]
	}
	return dev, nil
}

// rootPath joins p to root; p is cleaned first so "../" cannot climb out.
func rootPath(root, p string) string {
	if root == "" {
		root = "/"
	}
	return filepath.Join(root, filepath.Clean("/"+p))
}
