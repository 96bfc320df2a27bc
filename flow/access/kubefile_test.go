package access

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	vmcontext "github.com/onekube/onekube/context"
)

const userKubeconfig = `# the user's own file
apiVersion: v1
kind: Config
preferences:
  colors: true
clusters:
- name: prod
  cluster:
    server: https://prod.example:6443
    insecure-skip-tls-verify: false
    extensions:
    - name: client.authentication.k8s.io/exec
      extension: {audience: prod}
- name: lab-12
  cluster:
    server: https://10.0.0.1:6443
users:
- name: prod-admin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: prod-login
      someFieldNoVersionKnows: 42
- name: alice@lab-12
  user:
    token: stale
contexts:
- name: prod
  context: {cluster: prod, user: prod-admin, namespace: apps}
- name: alice@lab-12
  context: {cluster: lab-12, user: alice@lab-12}
current-context: prod
`

func testEntry() Entry {
	return Entry{Cluster: "lab-12", Name: "alice@lab-12", Server: "https://10.0.0.5:6443",
		CAPEM: []byte("CA PEM"), CertPEM: []byte("CERT PEM"), KeyPEM: vmcontext.NewSecret("KEY PEM")}
}

// The merge replaces this cluster's entries in place, adds nothing twice,
// makes the new context current, and keeps every other cluster, user,
// context, preference, extension and unknown field.
func TestMergeKeepsOtherContexts(t *testing.T) {
	t.Parallel()
	out, err := Merge([]byte(userKubeconfig), testEntry())
	if err != nil {
		t.Fatal(err)
	}
	var got, orig map[string]any
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	_ = yaml.Unmarshal([]byte(userKubeconfig), &orig)
	if got["current-context"] != "alice@lab-12" {
		t.Errorf("current-context %v", got["current-context"])
	}
	if got["preferences"].(map[string]any)["colors"] != true {
		t.Error("preferences lost")
	}
	names := func(key string) []string {
		var n []string
		for _, e := range got[key].([]any) {
			n = append(n, e.(map[string]any)["name"].(string))
		}
		return n
	}
	for key, want := range map[string]string{"clusters": "prod,lab-12", "users": "prod-admin,alice@lab-12", "contexts": "prod,alice@lab-12"} {
		if g := strings.Join(names(key), ","); g != want {
			t.Errorf("%s: %s, want %s", key, g, want)
		}
	}
	// prod's entries are byte-for-byte the same data.
	for i, key := range []string{"clusters", "users", "contexts"} {
		a, _ := yaml.Marshal(orig[key].([]any)[0])
		b, _ := yaml.Marshal(got[key].([]any)[0])
		if string(a) != string(b) {
			t.Errorf("%d %s[0] changed:\n%s\nwas\n%s", i, key, b, a)
		}
	}
	u := got["users"].([]any)[1].(map[string]any)["user"].(map[string]any)
	if _, ok := u["token"]; ok {
		t.Error("the replaced user kept its stale token")
	}
	if key, _ := base64.StdEncoding.DecodeString(u["client-key-data"].(string)); string(key) != "KEY PEM" {
		t.Errorf("client-key-data %q", key)
	}
	// Merging again changes nothing.
	again, err := Merge(out, testEntry())
	if err != nil || string(again) != string(out) {
		t.Errorf("second merge differs (err %v)", err)
	}
	if _, ok := Lookup(out, "lab-12", "alice@lab-12"); ok {
		t.Error("Lookup read a certificate out of \"CERT PEM\"")
	}
}

func TestMergeRefusesWhatIsNotAKubeconfig(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"- a\n- b\n", "kind: Pod\n", "apiVersion: v2\n", "clusters: 3\n", "users:\n- x\n", "contexts:\n- cluster: {}\n", ": :\n\t"} {
		if _, err := Merge([]byte(bad), testEntry()); !errors.Is(err, ErrNotKubeconfig) {
			t.Errorf("Merge(%q): err %v", bad, err)
		}
	}
	for _, empty := range []string{"", "\n", "# only a comment\n"} {
		out, err := Merge([]byte(empty), testEntry())
		if err != nil || !strings.Contains(string(out), "kind: Config") {
			t.Errorf("Merge(%q): %v\n%s", empty, err, out)
		}
	}
}

// UpdateFile writes 0600 through a temporary file and a rename: the old
// file is whole until the new one is, a failure leaves it untouched and no
// temporary behind, a symlink stays a symlink, and kubectl's lock is
// honoured.
func TestUpdateFileModesAndAtomicity(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "kube")
	path := filepath.Join(dir, "config")
	merge := func(old []byte) ([]byte, error) { return Merge(old, testEntry()) }
	if err := UpdateFile(path, merge); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	di, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Errorf("modes: file %04o dir %04o", fi.Mode().Perm(), di.Mode().Perm())
	}
	// A looser existing file is tightened.
	if err := os.WriteFile(path, []byte(userKubeconfig), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := UpdateFile(path, merge); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("rewritten mode %04o", fi.Mode().Perm())
	}
	before, _ := os.ReadFile(path)
	if err := UpdateFile(path, func([]byte) ([]byte, error) { return nil, errors.New("boom") }); err == nil {
		t.Fatal("a failing update succeeded")
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(before) {
		t.Error("a failed update changed the file")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	// Locked by kubectl: refused, untouched.
	if err := os.WriteFile(path+".lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := updateFile(path, 100*time.Millisecond, merge); !errors.Is(err, ErrLocked) {
		t.Errorf("locked: err %v", err)
	}
	_ = os.Remove(path + ".lock")
	// A symlink is followed; the link remains.
	link := filepath.Join(t.TempDir(), "config")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if err := UpdateFile(link, merge); err != nil {
		t.Fatal(err)
	}
	if li, _ := os.Lstat(link); li.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced by a file")
	}
	// Concurrent writers: each either merges or is refused by the lock;
	// the file always parses.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := UpdateFile(path, merge); err != nil && !errors.Is(err, ErrLocked) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	final, _ := os.ReadFile(path)
	if _, err := parseKubeconfig(final); err != nil {
		t.Errorf("after concurrent writes: %v", err)
	}
}

func FuzzMerge(f *testing.F) {
	f.Add([]byte(userKubeconfig))
	f.Add([]byte("{}"))
	f.Add([]byte(`{"clusters":[{"name":"a"}],"users":null}`))
	f.Add([]byte("a: &x [*x, *x]\n"))
	f.Add([]byte("clusters:\n- {name: lab-12}\n- {name: lab-12-2, cluster: {}}\ncontexts:\n- {name: a, context: {cluster: lab-12, user: alice@lab-12}}\n- {name: b, context: {cluster: lab-12-2}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := Merge(b, testEntry())
		if err != nil {
			return
		}
		// Every other context still reaches the same cluster and user.
		before, _ := parseKubeconfig(b)
		after, err := parseKubeconfig(out)
		if err != nil {
			t.Fatalf("merged output does not parse: %v\n%s", err, out)
		}
		reach := func(doc map[string]any, ctx map[string]any, key, field string) string {
			refs, _ := ctx["context"].(map[string]any)
			name, ok := refs[field].(string)
			if !ok {
				return "-"
			}
			list, _ := namedList(doc, key)
			j, _ := json.Marshal(findNamed(list, name))
			return string(j)
		}
		ctxs, _ := namedList(before, "contexts")
		for _, c := range ctxs {
			m := c.(map[string]any)
			if m["name"] == testEntry().Name {
				continue
			}
			for _, k := range [][2]string{{"clusters", "cluster"}, {"users", "user"}} {
				if a, z := reach(before, m, k[0], k[1]), reach(after, m, k[0], k[1]); a != z {
					t.Fatalf("context %v: its %s went from %s to %s", m["name"], k[1], a, z)
				}
			}
		}
		// Whatever merges is a kubeconfig with the entry current, and
		// merging into the result again is a no-op.
		doc, err := parseKubeconfig(out)
		if err != nil {
			t.Fatalf("merged output does not parse: %v\n%s", err, out)
		}
		if doc["current-context"] != "alice@lab-12" {
			t.Fatalf("current-context %v", doc["current-context"])
		}
		again, err := Merge(out, testEntry())
		if err != nil || string(again) != string(out) {
			t.Fatalf("merge is not idempotent: %v", err)
		}
	})
}

// An entry another context uses is never changed: the merge writes its
// cluster or user under a new name (NAME-2, NAME-3, …) instead, so that
// context keeps its server and credentials. An entry only this context
// uses, or one already holding exactly what the merge writes, is reused,
// and merging again changes nothing.
func TestMergeNeverRepointsOthers(t *testing.T) {
	t.Parallel()
	e := testEntry()
	b64 := base64.StdEncoding.EncodeToString
	ours := map[string]any{"server": e.Server, "certificate-authority-data": b64(e.CAPEM)}
	for _, tc := range []struct {
		name    string
		in      string
		cluster string // the cluster entry our context ends up using
		user    string
		keep    []string // KIND/NAME entries that must come out unchanged
	}{
		{"a cluster another context uses", `
clusters:
- {name: lab-12, cluster: {server: "https://10.9.9.9:6443"}}
contexts:
- {name: ops, context: {cluster: lab-12, user: ops}}
users:
- {name: ops, user: {token: t}}
`, "lab-12-2", "alice@lab-12", []string{"clusters/lab-12", "contexts/ops", "users/ops"}},
		{"a user another context uses", `
users:
- {name: alice@lab-12, user: {token: secret-of-another-cluster}}
contexts:
- {name: other, context: {cluster: elsewhere, user: alice@lab-12}}
`, "lab-12", "alice@lab-12-2", []string{"users/alice@lab-12", "contexts/other"}},
		{"a user name another context refers to, with no entry", `
contexts:
- {name: other, context: {cluster: elsewhere, user: alice@lab-12}}
`, "lab-12", "alice@lab-12-2", []string{"contexts/other"}},
		{"the next names are taken too", `
clusters:
- {name: lab-12, cluster: {server: "https://a:6443"}}
- {name: lab-12-2, cluster: {server: "https://b:6443"}}
contexts:
- {name: a, context: {cluster: lab-12, user: u}}
- {name: b, context: {cluster: lab-12-2, user: u}}
`, "lab-12-3", "alice@lab-12", []string{"clusters/lab-12", "clusters/lab-12-2"}},
		{"another context uses our context's own names through it", `
clusters:
- {name: lab-12, cluster: {server: "https://old:6443"}}
contexts:
- {name: alice@lab-12, context: {cluster: lab-12, user: alice@lab-12}}
- {name: alice-view@lab-12, context: {cluster: lab-12, user: alice-view@lab-12}}
`, "lab-12-2", "alice@lab-12", []string{"clusters/lab-12", "contexts/alice-view@lab-12"}},
		{"a cluster only our context uses is replaced", `
clusters:
- {name: lab-12, cluster: {server: "https://old:6443"}}
contexts:
- {name: alice@lab-12, context: {cluster: lab-12, user: alice@lab-12}}
`, "lab-12", "alice@lab-12", nil},
		{"an unused cluster entry is replaced", `
clusters:
- {name: lab-12, cluster: {server: "https://old:6443"}}
`, "lab-12", "alice@lab-12", nil},
		{"a shared cluster entry that already says the same is reused", `
clusters:
- name: lab-12
  cluster: {server: "https://10.0.0.5:6443", certificate-authority-data: "` + b64(e.CAPEM) + `"}
contexts:
- {name: alice-view@lab-12, context: {cluster: lab-12, user: alice-view@lab-12}}
`, "lab-12", "alice@lab-12", []string{"clusters/lab-12", "contexts/alice-view@lab-12"}},
		{"our context moved earlier: its renamed cluster is reused", `
clusters:
- {name: lab-12, cluster: {server: "https://a:6443"}}
- {name: lab-12-2, cluster: {server: "https://old:6443"}}
contexts:
- {name: ops, context: {cluster: lab-12, user: u}}
- {name: alice@lab-12, context: {cluster: lab-12-2, user: alice@lab-12}}
`, "lab-12-2", "alice@lab-12", []string{"clusters/lab-12"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, err := Merge([]byte(tc.in), e)
			if err != nil {
				t.Fatal(err)
			}
			before, _ := parseKubeconfig([]byte(tc.in))
			after, _ := parseKubeconfig(out)
			find := func(doc map[string]any, key, name string) map[string]any {
				list, _ := namedList(doc, key)
				for _, x := range list {
					if m := x.(map[string]any); m["name"] == name {
						return m
					}
				}
				return nil
			}
			for _, k := range tc.keep {
				key, name, _ := strings.Cut(k, "/")
				a, _ := yaml.Marshal(find(before, key, name))
				b, _ := yaml.Marshal(find(after, key, name))
				if string(a) != string(b) {
					t.Errorf("%s changed:\n%s\nwas\n%s", k, b, a)
				}
			}
			ctx := find(after, "contexts", e.Name)
			if ctx == nil || after["current-context"] != e.Name {
				t.Fatalf("no current context %s:\n%s", e.Name, out)
			}
			refs := ctx["context"].(map[string]any)
			if refs["cluster"] != tc.cluster || refs["user"] != tc.user {
				t.Errorf("context uses cluster %v, user %v; want %s, %s", refs["cluster"], refs["user"], tc.cluster, tc.user)
			}
			c := find(after, "clusters", tc.cluster)
			if c == nil || c["cluster"].(map[string]any)["server"] != ours["server"] {
				t.Errorf("cluster %s: %v", tc.cluster, c)
			}
			u := find(after, "users", tc.user)
			if u == nil || u["user"].(map[string]any)["client-key-data"] != b64([]byte(e.KeyPEM.Reveal())) {
				t.Errorf("user %s: %v", tc.user, u)
			}
			again, err := Merge(out, e)
			if err != nil || string(again) != string(out) {
				t.Errorf("merging again changed the file (%v):\n%s\nwas\n%s", err, again, out)
			}
		})
	}
}

// Lookup follows the context to the entries a merge renamed, so a valid
// credential is still found (and kept without --renew).
func TestLookupFollowsRenamedEntries(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	cert, key := ca.leaf(t, "alice", []string{"onekube:alice:cluster-admin"}, nil)
	e := testEntry()
	e.CAPEM, e.CertPEM, e.KeyPEM = ca.pem, cert, vmcontext.NewSecret(key)
	in := "clusters:\n- {name: lab-12, cluster: {server: \"https://x:6443\"}}\ncontexts:\n- {name: ops, context: {cluster: lab-12, user: ops}}\n"
	out, m, err := MergeReport([]byte(in), e)
	if err != nil || m.Cluster != "lab-12-2" {
		t.Fatalf("%+v %v", m, err)
	}
	ex, ok := Lookup(out, "lab-12", e.Name)
	if !ok || ex.Server != e.Server || ex.Cert.Subject.CommonName != "alice" {
		t.Errorf("Lookup: %v %+v", ok, ex)
	}
	if _, ok := Lookup(out, "lab-1", e.Name); ok {
		t.Error("Lookup accepted another cluster's name")
	}
}
