package testbed

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// At is b with the real Kubernetes binaries of another release (the tools
// stay): a bed whose clusters start at the release an upgrade leaves.
func (b Binaries) At(version string) (Binaries, error) {
	dir, err := LocateK8s(version)
	if err != nil {
		return Binaries{}, err
	}
	b.Version, b.K8sDir = version, dir
	return b, nil
}

// BundleLabel is the file-system label of the upgrade bundle
// (appliance/bundle.sh): a VM finds the attached bundle by it.
const BundleLabel = "ONEKUBE-BUNDLE"

// BuildBundle builds the upgrade bundle of b's release into out with the
// appliance's own script (appliance/bundle.sh), offline: the release's
// kubeadm and kubectl, a kubelet stand-in of that release, and one
// docker-archive per image `kubeadm config images list` names, holding
// the bed's binary where the real image keeps it (/usr/local/bin).
// It returns the manifest's sha256, as the image template carries it.
func BuildBundle(ctx context.Context, b Binaries, out string) (string, error) {
	from, err := os.MkdirTemp(filepath.Dir(out), "bundle-from-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(from)
	for _, d := range []string{"bin", "images"} {
		if err := os.MkdirAll(filepath.Join(from, d), 0o755); err != nil {
			return "", err
		}
	}
	for _, p := range []string{"kubeadm", "kubectl"} {
		if err := install(filepath.Join(b.K8sDir, p), filepath.Join(from, "bin", p)); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(from, "bin", "kubelet"), KubeletStub(b.Version), 0o755); err != nil {
		return "", err
	}
	refs, err := ReleaseImages(b.K8sDir, b.Version)
	if err != nil {
		return "", err
	}
	for _, ref := range refs {
		name := path.Base(ref[:strings.LastIndex(ref, ":")])
		files := map[string]string{}
		switch name {
		case "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler":
			files["usr/local/bin/"+name] = filepath.Join(b.K8sDir, name)
		}
		if err := WriteImageArchive(filepath.Join(from, "images", name+".tar"), ref, files); err != nil {
			return "", err
		}
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(root, "appliance", "bundle.sh"), b.Version, out)
	cmd.Env = append(os.Environ(), "BUNDLE_FROM="+from)
	msg, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("appliance/bundle.sh %s: %w\n%s", b.Version, err, msg)
	}
	for _, line := range strings.Split(string(msg), "\n") {
		if sum, ok := strings.CutPrefix(line, "manifest sha256: "); ok {
			return strings.TrimSpace(sum), nil
		}
	}
	return "", fmt.Errorf("appliance/bundle.sh printed no manifest sha256:\n%s", msg)
}

// WriteImageArchive writes a docker-archive (as `docker save` does) of one
// image tagged ref whose single layer holds files (path in the image →
// file on the host).
func WriteImageArchive(file, ref string, files map[string]string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	tw := tar.NewWriter(w)
	add := func(name string, size int64, mode int64, r io.Reader) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Size: size, Mode: mode, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := io.Copy(tw, r)
		return err
	}
	// The layer is streamed from the binaries, so its size is counted
	// first: a 512-byte header per file (short names), the body padded to
	// 512, and the 1024-byte end marker.
	size := int64(0)
	type entry struct {
		name, src string
		size      int64
	}
	var entries []entry
	for name, src := range files {
		st, err := os.Stat(src)
		if err != nil {
			f.Close()
			return err
		}
		entries = append(entries, entry{name, src, st.Size()})
		size += 512 + (st.Size()+511)/512*512
	}
	size += 1024 // the layer tar's end marker
	config := []byte(`{"architecture":"amd64","os":"linux","config":{}}`)
	manifest, _ := json.Marshal([]map[string]any{{"Config": "config.json", "RepoTags": []string{ref}, "Layers": []string{"layer.tar"}}})
	if err := add("manifest.json", int64(len(manifest)), 0o644, bytes.NewReader(manifest)); err != nil {
		f.Close()
		return err
	}
	if err := add("config.json", int64(len(config)), 0o644, bytes.NewReader(config)); err != nil {
		f.Close()
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: "layer.tar", Size: size, Mode: 0o644, Typeflag: tar.TypeReg}); err != nil {
		f.Close()
		return err
	}
	lw := tar.NewWriter(tw)
	for _, e := range entries {
		if err := lw.WriteHeader(&tar.Header{Name: e.name, Size: e.size, Mode: 0o755, Typeflag: tar.TypeReg}); err != nil {
			f.Close()
			return err
		}
		src, err := os.Open(e.src)
		if err != nil {
			f.Close()
			return err
		}
		_, err = io.Copy(lw, src)
		src.Close()
		if err != nil {
			f.Close()
			return err
		}
	}
	if err := lw.Close(); err != nil {
		f.Close()
		return err
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// repoRoot is the module's root directory.
func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module root: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside the onekube module")
	}
	return filepath.Dir(mod), nil
}
