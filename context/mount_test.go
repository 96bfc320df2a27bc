package context_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
)

// scriptedRunner answers commands by program name and records them.
type scriptedRunner struct {
	replies map[string]func(args []string) ([]byte, error)
	calls   [][]string
}

func (r *scriptedRunner) run(_ context.Context, name string, args ...string) ([]byte, error) {
	r.calls = append(r.calls, append([]string{name}, args...))
	if f, ok := r.replies[name]; ok {
		return f(args)
	}
	return nil, nil
}

func TestCDMounter(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var mountedAt string
	r := &scriptedRunner{replies: map[string]func([]string) ([]byte, error){
		"blkid": func([]string) ([]byte, error) { return []byte("/dev/sr0\n"), nil },
		"mount": func(args []string) ([]byte, error) {
			mountedAt = args[len(args)-1]
			// Stand in for the CD's files.
			return nil, os.WriteFile(filepath.Join(mountedAt, "context.sh"), []byte("VMID='3'\n"), 0o400)
		},
		"umount": func([]string) ([]byte, error) {
			return nil, os.Remove(filepath.Join(mountedAt, "context.sh"))
		},
	}}
	m := vmcontext.CDMounter{Root: root, Run: r.run}
	dir, release, err := m.Mount(context.Background())
	if err != nil {
		t.Fatalf("Mount: %v", err)
	}
	if filepath.Dir(dir) != filepath.Join(root, "run/onekube") {
		t.Errorf("mount point %s not under <root>/run/onekube", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "context.sh")); err != nil {
		t.Errorf("context.sh not visible: %v", err)
	}
	if err := release(); err != nil {
		t.Fatalf("release: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("mount point left behind: %v", err)
	}
	want := [][]string{
		{"blkid", "-l", "-t", "LABEL=CONTEXT", "-o", "device"},
		{"mount", "-o", "ro,nosuid,nodev,noexec", "/dev/sr0", dir},
		{"umount", dir},
	}
	if !reflect.DeepEqual(r.calls, want) {
		t.Errorf("commands = %q, want %q", r.calls, want)
	}
}

func TestCDMounterFailures(t *testing.T) {
	t.Parallel()
	exit2 := exec.Command("sh", "-c", "exit 2").Run() // a real *exec.ExitError with status 2
	tests := []struct {
		name    string
		replies map[string]func([]string) ([]byte, error)
		is      error
		msg     string
	}{
		{"blkid finds nothing (exit 2)", map[string]func([]string) ([]byte, error){
			"blkid": func([]string) ([]byte, error) { return nil, exit2 },
		}, vmcontext.ErrNoContextDevice, ""},
		{"blkid prints nothing", nil, vmcontext.ErrNoContextDevice, ""},
		{"blkid missing", map[string]func([]string) ([]byte, error){
			"blkid": func([]string) ([]byte, error) { return nil, exec.ErrNotFound },
		}, exec.ErrNotFound, "finding the CONTEXT device"},
		{"mount fails", map[string]func([]string) ([]byte, error){
			"blkid": func([]string) ([]byte, error) { return []byte("/dev/sr0"), nil },
			"mount": func([]string) ([]byte, error) { return nil, errors.New("mount: only root can do that") },
		}, nil, "mounting /dev/sr0: mount: only root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			r := &scriptedRunner{replies: tt.replies}
			_, _, err := vmcontext.CDMounter{Root: root, Run: r.run}.Mount(context.Background())
			if err == nil {
				t.Fatal("Mount succeeded")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
			// No mount point may be left behind.
			entries, _ := os.ReadDir(filepath.Join(root, "run/onekube"))
			if len(entries) != 0 {
				t.Errorf("left behind: %v", entries)
			}
		})
	}
}

func TestCDMounterReleaseReportsUmountFailure(t *testing.T) {
	t.Parallel()
	r := &scriptedRunner{replies: map[string]func([]string) ([]byte, error){
		"blkid":  func([]string) ([]byte, error) { return []byte("/dev/sr1\n/dev/sr0\n"), nil },
		"umount": func([]string) ([]byte, error) { return nil, errors.New("target is busy") },
	}}
	_, release, err := vmcontext.CDMounter{Root: t.TempDir(), Run: r.run}.Mount(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.calls[1][3] != "/dev/sr1" {
		t.Errorf("mounted %s, want the first device blkid listed", r.calls[1][3])
	}
	if err := release(); err == nil || !strings.Contains(err.Error(), "target is busy") {
		t.Errorf("release error = %v", err)
	}
}
