package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tarOf builds a tar of name → content (a "->" prefix makes a symlink).
func tarOf(t testing.TB, members [][2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range members {
		h := &tar.Header{Name: m[0], Mode: 0o755, Size: int64(len(m[1])), Typeflag: tar.TypeReg}
		if target, ok := strings.CutPrefix(m[1], "->"); ok {
			h = &tar.Header{Name: m[0], Linkname: target, Typeflag: tar.TypeSymlink, Mode: 0o777}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(m[1])); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// dockerArchive is what `docker save` writes for one image of one layer.
func dockerArchive(t testing.TB, ref string, layer [][2]string) []byte {
	manifest, _ := json.Marshal([]archiveImage{{Config: "config.json", RepoTags: []string{ref}, Layers: []string{"l1/layer.tar"}}})
	return tarOf(t, [][2]string{
		{"manifest.json", string(manifest)},
		{"config.json", `{"architecture":"amd64","os":"linux"}`},
		{"l1/layer.tar", string(tarOf(t, layer))},
	})
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runCtr(t *testing.T, root string, args ...string) (string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := ctrMain(args, root, &out, &errb)
	return out.String() + errb.String(), code
}

// ctr import is as strict as the real one: the file must exist and be an
// image archive; only the k8s.io namespace reaches the CRI; an imported
// image's binary is then found on its PATH.
func TestCtrImport(t *testing.T) {
	dir := t.TempDir()
	const ref = "registry.k8s.io/kube-apiserver:v1.37.2"
	good := writeFile(t, dir, "apiserver.tar", dockerArchive(t, ref, [][2]string{{"usr/local/bin/kube-apiserver", "#!/bin/sh\n"}}))
	noManifest := writeFile(t, dir, "plain.tar", tarOf(t, [][2]string{{"hello", "x"}}))
	oci := writeFile(t, dir, "oci.tar", tarOf(t, [][2]string{{"index.json", "{}"}, {"oci-layout", "{}"}}))
	notTar := writeFile(t, dir, "junk.tar", bytes.Repeat([]byte("junk"), 300))
	badRef := writeFile(t, dir, "badref.tar", dockerArchive(t, "../../etc:v1", nil))
	escape := writeFile(t, dir, "escape.tar", dockerArchive(t, "registry.k8s.io/evil:v1", [][2]string{{"usr/link", "->/"}, {"usr/link/owned", "x"}}))
	missingLayer, _ := json.Marshal([]archiveImage{{Config: "config.json", RepoTags: []string{ref}, Layers: []string{"gone.tar"}}})
	noLayer := writeFile(t, dir, "nolayer.tar", tarOf(t, [][2]string{{"manifest.json", string(missingLayer)}, {"config.json", "{}"}}))

	tests := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"absent file", []string{"-n", "k8s.io", "images", "import", filepath.Join(dir, "absent.tar")}, 1, "no such file or directory"},
		{"not an archive", []string{"-n", "k8s.io", "images", "import", notTar}, 1, "unrecognized image format"},
		{"no manifest", []string{"-n", "k8s.io", "images", "import", noManifest}, 1, "unrecognized image format"},
		{"OCI layout", []string{"-n", "k8s.io", "images", "import", oci}, 1, "only docker-archive"},
		{"bad reference", []string{"-n", "k8s.io", "images", "import", badRef}, 1, "not a tagged image reference"},
		{"layer missing", []string{"-n", "k8s.io", "images", "import", noLayer}, 1, "layer gone.tar: not in the archive"},
		{"symlink escape", []string{"-n", "k8s.io", "images", "import", escape}, 1, "goes through the symlink"},
		{"unknown flag", []string{"-n", "k8s.io", "images", "import", "--snapshotter=x", good}, 1, "not played"},
		{"default namespace", []string{"images", "import", good}, 0, "unpacking " + ref},
		{"k8s.io", []string{"-n", "k8s.io", "images", "import", "--all-platforms", good}, 0, "unpacking " + ref},
	}
	root := filepath.Join(dir, "store", "images")
	store := imageStore{root: root}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, before := store.lookup(ref)
			out, code := runCtr(t, root, tc.args...)
			if code != tc.code || !strings.Contains(out, tc.out) {
				t.Fatalf("ctr %v = %d %q; want %d and %q", tc.args, code, out, tc.code, tc.out)
			}
			_, after := store.lookup(ref)
			if want := tc.name == "k8s.io" || before; after != want {
				t.Errorf("image in the k8s.io store: %v, want %v", after, want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "owned")); err == nil {
		t.Error("a layer wrote outside its rootfs")
	}
	bin, err := store.binary(ref, "kube-apiserver")
	if err != nil || !strings.HasSuffix(bin, "/rootfs/usr/local/bin/kube-apiserver") {
		t.Errorf("binary = %q, %v", bin, err)
	}
	if _, err := store.binary(ref, "etcd"); err == nil || !strings.Contains(err.Error(), "executable file not found") {
		t.Errorf("binary(etcd) = %v", err)
	}
	if _, err := store.binary("registry.k8s.io/kube-apiserver:v1.36.3", "kube-apiserver"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("binary of an absent image = %v", err)
	}
	if out, code := runCtr(t, root, "-n", "k8s.io", "images", "ls", "-q"); code != 0 || out != ref+"\n" {
		t.Errorf("images ls -q = %d %q", code, out)
	}
	if out, code := runCtr(t, root, "-n", "k8s.io", "images", "rm", ref); code != 0 || out != ref+"\n" {
		t.Errorf("images rm = %d %q", code, out)
	}
	if _, ok := store.lookup(ref); ok {
		t.Error("image still there after rm")
	}
}

func TestCheckRef(t *testing.T) {
	for ref, ok := range map[string]bool{
		"registry.k8s.io/kube-apiserver:v1.37.2":  true,
		"registry.k8s.io/coredns/coredns:v1.14.6": true,
		"registry.k8s.io/etcd:3.7.0-0":            true,
		"localhost:5000/pause:3.10.2":             true,
		"registry.k8s.io/kube-apiserver":          false, // untagged
		"kube-apiserver:v1":                       false, // no host
		"registry.k8s.io/../x:v1":                 false,
		"/abs/x:v1":                               false,
		"registry.k8s.io/x@sha256:abc":            false,
		"":                                        false,
	} {
		if err := checkRef(ref); (err == nil) != ok {
			t.Errorf("checkRef(%q) = %v, want ok=%v", ref, err, ok)
		}
	}
}

// FuzzParseArchiveManifest: manifest.json comes from a bundle, outside
// input; whatever it says, every path it yields stays inside the store
// and the archive.
func FuzzParseArchiveManifest(f *testing.F) {
	f.Add([]byte(`[{"Config":"c.json","RepoTags":["registry.k8s.io/pause:3.10.2"],"Layers":["a/layer.tar"]}]`))
	f.Add([]byte(`[{"Config":"../c.json","RepoTags":["registry.k8s.io/pause:3.10.2"],"Layers":[]}]`))
	f.Add([]byte(`[{"Config":"c","RepoTags":["r.io/../../x:1"]}]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		imgs, err := parseArchiveManifest(data)
		if err != nil {
			return
		}
		store := imageStore{root: "/store"}
		for _, im := range imgs {
			for _, ref := range im.RepoTags {
				d, err := store.dir(ref)
				if err != nil || !strings.HasPrefix(d, "/store/") || strings.Contains(d, "..") {
					t.Fatalf("ref %q maps to %q (%v)", ref, d, err)
				}
			}
			for _, m := range append([]string{im.Config}, im.Layers...) {
				if strings.HasPrefix(m, "/") || strings.HasPrefix(m, "../") || m == ".." {
					t.Fatalf("member %q accepted", m)
				}
			}
		}
	})
}
