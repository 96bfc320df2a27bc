package env

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRoot(t *testing.T) {
	cases := map[string]string{
		"":         "is not set",
		"rel/dir":  "not an absolute path",
		"/":        "real /etc",
		"/tmp/../": "real /etc",
	}
	for val, want := range cases {
		t.Setenv(VarRoot, val)
		if _, err := Root(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=%q: err = %v, want %q", VarRoot, val, err, want)
		}
	}
	dir := t.TempDir()
	t.Setenv(VarRoot, dir+"/")
	if got, err := Root(); err != nil || got != dir {
		t.Errorf("Root() = %q, %v", got, err)
	}
}

func TestShouldFail(t *testing.T) {
	root := t.TempDir()
	t.Setenv(VarFail, "init, join:2")
	var got []bool
	for range 4 {
		f, err := ShouldFail(root, "join")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, f)
	}
	if want := []bool{true, true, false, false}; !equal(got, want) {
		t.Errorf("join:2 = %v, want %v", got, want)
	}
	if f, _ := ShouldFail(root, "init"); !f {
		t.Error("init rule ignored")
	}
	if f, _ := ShouldFail(root, "reset"); f {
		t.Error("reset has no rule")
	}
	t.Setenv(VarFail, "join:x")
	if _, err := ShouldFail(root, "join"); err == nil {
		t.Error("malformed rule accepted")
	}
}

func equal(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestNodesAndLog(t *testing.T) {
	root := t.TempDir()
	for _, n := range []Node{{"m", "control-plane"}, {"w", "<none>"}, {"m", "control-plane"}} {
		if err := AddNode(root, n); err != nil {
			t.Fatal(err)
		}
	}
	nodes, err := Nodes(root)
	if err != nil || len(nodes) != 2 || nodes[0].Name != "w" || nodes[1].Name != "m" {
		t.Errorf("nodes = %v, %v", nodes, err)
	}

	log := filepath.Join(t.TempDir(), "log")
	t.Setenv(VarLog, log)
	for _, c := range []string{"init", "join"} {
		e := NewEntry("kubeadm", []string{c})
		e.Command = c
		if err := e.Append(); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := ReadLog(log)
	if err != nil || len(entries) != 2 || entries[1].Command != "join" {
		t.Errorf("entries = %+v, %v", entries, err)
	}
	if st, _ := os.Stat(log); st.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v", st.Mode().Perm())
	}
}

func TestSplitDocuments(t *testing.T) {
	in := "# header\n---\na: 1\n--- \n# only a comment\n---\nb: 2\n---\n"
	docs := SplitDocuments([]byte(in))
	if len(docs) != 2 || string(docs[0]) != "a: 1\n" || string(docs[1]) != "b: 2\n" {
		t.Errorf("docs = %q", docs)
	}
}
