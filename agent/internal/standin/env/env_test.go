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
	net, master, worker := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.Symlink(master, filepath.Join(net, "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	t.Setenv(VarNet, net)
	if _, err := Dial("10.0.0.1:6443"); err == nil || err.Error() != "dial tcp 10.0.0.1:6443: connect: connection refused" {
		t.Errorf("no API server yet: %v", err)
	}
	if _, err := Dial("10.0.0.2:6443"); err == nil || !strings.Contains(err.Error(), "no route to host") {
		t.Errorf("no host: %v", err)
	}
	for _, f := range []string{APIServerManifest} {
		if err := os.MkdirAll(filepath.Dir(Path(master, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(Path(master, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := StartAPIServer(master, "10.0.0.1:6443"); err != nil {
		t.Fatal(err)
	}
	api, err := Dial("10.0.0.1:6443")
	if err != nil {
		t.Fatal(err)
	}
	if err := api.Register(Node{Name: "w", Role: "<none>", Host: worker}, true); err != nil {
		t.Fatal(err)
	}
	if err := StartKubelet(worker, "w", master); err != nil {
		t.Fatal(err)
	}
	if err := api.Register(Node{Name: "w", Host: master}, true); err == nil || !strings.Contains(err.Error(), `a Node with name "w" and status "Ready" already exists`) {
		t.Errorf("duplicate of a Ready node: %v", err)
	}
	if err := StopKubelet(worker); err != nil {
		t.Fatal(err)
	}
	// The stopped kubelet's Node stays Ready for the grace period.
	if err := api.Register(Node{Name: "w", Host: master}, true); err == nil {
		t.Error("took over a Node whose kubelet stopped a moment ago")
	}
	if nodes, _ := api.Nodes(); len(nodes) != 1 || nodes[0].StoppedAt.IsZero() {
		t.Errorf("the kubelet's stop was not recorded: %+v", nodes)
	}
	t.Setenv(VarNodeGrace, "0s")
	if err := api.Register(Node{Name: "w", Host: master}, true); err != nil {
		t.Errorf("take-over of a NotReady node: %v", err)
	}
	nodes, err := api.Nodes()
	if err != nil || len(nodes) != 1 || nodes[0].Host != master {
		t.Errorf("nodes = %+v, %v", nodes, err)
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
