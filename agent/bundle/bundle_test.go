package bundle

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const h0 = "0000000000000000000000000000000000000000000000000000000000000000"

func manifestJSON(version string, files map[string]string) string {
	var parts []string
	for k, v := range files {
		parts = append(parts, `"`+k+`":"`+v+`"`)
	}
	return `{"kubernetesVersion":"` + version + `","files":{` + strings.Join(parts, ",") + `}}`
}

func goodFiles() map[string]string {
	return map[string]string{"bin/kubeadm": h0, "bin/kubelet": h0, "bin/kubectl": h0, "images/kube-apiserver.tar": h0}
}

func TestParse(t *testing.T) {
	with := func(k, v string) map[string]string { f := goodFiles(); f[k] = v; return f }
	without := func(k string) map[string]string { f := goodFiles(); delete(f, k); return f }
	for name, tc := range map[string]struct {
		in      string
		wantErr string
	}{
		"good":             {manifestJSON("v1.37.2", goodFiles()), ""},
		"unknown field":    {`{"kubernetesVersion":"v1.37.2","files":{},"extra":1}`, "unknown field"},
		"duplicate key":    {`{"kubernetesVersion":"v1.37.2","kubernetesVersion":"v1.38.0","files":{}}`, "given twice"},
		"duplicate file":   {`{"kubernetesVersion":"v1.37.2","files":{"bin/kubeadm":"` + h0 + `","bin/kubeadm":"` + h0 + `"}}`, "given twice"},
		"trailing data":    {manifestJSON("v1.37.2", goodFiles()) + "{}", "after the JSON"},
		"bad version":      {manifestJSON("1.37.2", goodFiles()), "kubernetesVersion"},
		"prerelease":       {manifestJSON("v1.37.2-rc.0", goodFiles()), "kubernetesVersion"},
		"upper-case hash":  {manifestJSON("v1.37.2", with("bin/kubeadm", strings.ToUpper("ab"+h0[2:]))), "64 lowercase"},
		"short hash":       {manifestJSON("v1.37.2", with("bin/kubeadm", "abc")), "64 lowercase"},
		"escape":           {manifestJSON("v1.37.2", with("images/../../etc/x.tar", h0)), "only"},
		"absolute":         {manifestJSON("v1.37.2", with("/usr/bin/kubeadm", h0)), "only"},
		"extra binary":     {manifestJSON("v1.37.2", with("bin/sh", h0)), "only"},
		"nested image":     {manifestJSON("v1.37.2", with("images/a/b.tar", h0)), "only"},
		"dash image":       {manifestJSON("v1.37.2", with("images/-rf.tar", h0)), "only"},
		"missing kubelet":  {manifestJSON("v1.37.2", without("bin/kubelet")), "bin/kubelet missing"},
		"no images":        {manifestJSON("v1.37.2", without("images/kube-apiserver.tar")), "no images"},
		"not an object":    {`[]`, "bundle manifest"},
		"empty":            {``, "bundle manifest"},
		"too large":        {strings.Repeat(" ", MaxManifestBytes+1), "more than"},
		"files not object": {`{"kubernetesVersion":"v1.37.2","files":[]}`, "bundle manifest"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Parse = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

// writeBundle lays out a valid bundle in a temp dir and returns the dir
// and the manifest's sha256.
func writeBundle(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	for p, body := range map[string]string{"bin/kubeadm": "kubeadm", "bin/kubelet": "kubelet", "bin/kubectl": "kubectl", "images/pause.tar": "tar"} {
		mode := os.FileMode(0o644)
		if strings.HasPrefix(p, "bin/") {
			mode = 0o755
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	m, err := FromDir(dir, "v1.37.2")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestName), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, HashBytes(raw)
}

func TestOpen(t *testing.T) {
	for name, tc := range map[string]struct {
		spoil   func(t *testing.T, dir string)
		wrongSH bool
		wantErr string
	}{
		"good": {},
		"lost+found ignored": {spoil: func(t *testing.T, dir string) {
			os.Mkdir(filepath.Join(dir, "lost+found"), 0o700)
			os.WriteFile(filepath.Join(dir, "lost+found", "x"), []byte("x"), 0o755)
		}},
		"unlisted data file tolerated": {spoil: func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "README"), []byte("x"), 0o644)
		}},
		"plan pins another manifest": {wrongSH: true, wantErr: "the upgrade plan pins"},
		"binary changed": {spoil: func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "bin/kubelet"), []byte("evil"), 0o755)
		}, wantErr: "bin/kubelet has sha256"},
		"binary missing": {spoil: func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "bin/kubectl"))
		}, wantErr: "bin/kubectl"},
		"extra executable": {spoil: func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "bin/helper"), []byte("x"), 0o755)
		}, wantErr: "executable and not in the manifest"},
		"listed file is a symlink out": {spoil: func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "images/pause.tar"))
			os.Symlink("/etc/passwd", filepath.Join(dir, "images/pause.tar"))
		}, wantErr: "not a regular file"},
		"unlisted symlink": {spoil: func(t *testing.T, dir string) {
			os.Symlink("/usr/bin/sh", filepath.Join(dir, "images/sh"))
		}, wantErr: "not a listed file"},
		"manifest is a symlink out": {spoil: func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, ManifestName))
			os.Symlink("/etc/hostname", filepath.Join(dir, ManifestName))
		}, wantErr: "bundle"},
	} {
		t.Run(name, func(t *testing.T) {
			dir, sum := writeBundle(t)
			if tc.spoil != nil {
				tc.spoil(t, dir)
			}
			if tc.wrongSH {
				sum = h0
			}
			m, err := Open(dir, sum)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				if m.KubernetesVersion != "v1.37.2" || !reflect.DeepEqual(m.Images(), []string{"images/pause.tar"}) {
					t.Fatalf("Open = %+v", m)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Open = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(manifestJSON("v1.37.2", goodFiles())))
	f.Add([]byte(`{"kubernetesVersion":"v1.37.2","files":{"bin/kubeadm":"x"}}`))
	f.Add([]byte(`{"kubernetesVersion":"v1.37.2","kubernetesVersion":"v1"}`))
	f.Add([]byte(`{"files":{"images/../x.tar":""}}`))
	f.Add([]byte(`[[[[[[]]]]]]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			return
		}
		// Whatever parses is valid, and survives the make target's writer.
		raw, err := Marshal(m)
		if err != nil {
			t.Fatalf("Marshal of a parsed manifest: %v", err)
		}
		again, err := Parse(raw)
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("round trip: %v, %+v vs %+v", err, again, m)
		}
		for p := range m.Files {
			if strings.Contains(p, "..") || strings.HasPrefix(p, "/") {
				t.Fatalf("escaping path accepted: %q", p)
			}
		}
	})
}
