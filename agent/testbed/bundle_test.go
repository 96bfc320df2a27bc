package testbed

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// WriteImageArchive's streamed layer must be a whole tar holding the files.
func TestWriteImageArchive(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "etcd")
	body := bytes.Repeat([]byte("x"), 1000)
	if err := os.WriteFile(bin, body, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "etcd.tar")
	if err := WriteImageArchive(file, "registry.k8s.io/etcd:3.7.0-0", map[string]string{"usr/local/bin/etcd": bin}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	members := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		members[h.Name], _ = io.ReadAll(tr)
	}
	var m []struct {
		Config           string
		RepoTags, Layers []string
	}
	if err := json.Unmarshal(members["manifest.json"], &m); err != nil || len(m) != 1 || m[0].RepoTags[0] != "registry.k8s.io/etcd:3.7.0-0" {
		t.Fatalf("manifest.json %s (%v)", members["manifest.json"], err)
	}
	lr := tar.NewReader(bytes.NewReader(members[m[0].Layers[0]]))
	h, err := lr.Next()
	if err != nil || h.Name != "usr/local/bin/etcd" || h.Mode&0o111 == 0 {
		t.Fatalf("layer: %+v, %v", h, err)
	}
	if got, _ := io.ReadAll(lr); !bytes.Equal(got, body) {
		t.Error("layer content differs")
	}
	if _, err := lr.Next(); err != io.EOF {
		t.Errorf("layer after the file: %v", err)
	}
}
