package system

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRootPath(t *testing.T) {
	t.Parallel()
	cases := []struct {
		root, p, want string
	}{
		{"/tmp/r", "/etc/kubernetes/pki/ca.crt", "/tmp/r/etc/kubernetes/pki/ca.crt"},
		{"/tmp/r", "etc/x", "/tmp/r/etc/x"},
		{"/tmp/r", "/../../etc/passwd", "/tmp/r/etc/passwd"},
		{"/tmp/r", "/var/lib/../lib/onekube", "/tmp/r/var/lib/onekube"},
		{"", "/etc/x", "/etc/x"},
		{"/", "/etc/x", "/etc/x"},
	}
	for _, c := range cases {
		if got := Root(c.root).Path(c.p); got != c.want {
			t.Errorf("Root(%q).Path(%q) = %q, want %q", c.root, c.p, got, c.want)
		}
	}
}

func TestWriteFileAtomicAndMode(t *testing.T) {
	t.Parallel()
	r := Root(t.TempDir())
	if err := r.WriteFile("/var/lib/onekube/state.json", []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile("/var/lib/onekube/state.json", []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := r.ReadFile("/var/lib/onekube/state.json")
	if err != nil || string(got) != "two" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	st, err := os.Stat(r.Path("/var/lib/onekube/state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", st.Mode().Perm())
	}
	left, _ := filepath.Glob(r.Path("/var/lib/onekube/.state.json.tmp*"))
	if len(left) != 0 {
		t.Errorf("temp files left behind: %v", left)
	}
	if ok, err := r.Exists("/var/lib/onekube/state.json"); !ok || err != nil {
		t.Errorf("Exists = %v, %v", ok, err)
	}
	if err := r.Remove("/var/lib/onekube/state.json"); err != nil {
		t.Fatal(err)
	}
	if err := r.Remove("/var/lib/onekube/state.json"); err != nil {
		t.Errorf("second Remove: %v", err)
	}
	if ok, _ := r.Exists("/var/lib/onekube/state.json"); ok {
		t.Error("file still exists after Remove")
	}
}
