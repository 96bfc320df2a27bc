package testbed

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

var (
	//go:embed stubs/systemctl
	systemctlStub []byte
	//go:embed stubs/kubelet
	kubeletStub []byte
	//go:embed stubs/blkid
	blkidStub []byte
	//go:embed stubs/mount
	mountStub []byte
)

// prepareDisk lays out a new VM's disk (once; a reboot keeps it): the
// overlay upper directories of /etc, /var and /usr, holding what the image
// adds to the host's files: its hostname and hosts file, the Kubernetes
// programs in /usr/bin, the played parts and the VMSpec's files.
func (vm *VM) prepareDisk() error {
	disk := filepath.Join(vm.dir, "disk")
	if _, err := os.Stat(disk); err == nil {
		return nil
	}
	b := vm.bed.o.Bins
	files := map[string]File{
		"/etc/hostname": {Data: []byte(vm.Spec.Hostname + "\n"), Mode: 0o644},
		// Debian's default hosts file names the image's hostname on 127.0.1.1.
		"/etc/hosts": {Data: []byte(fmt.Sprintf("127.0.0.1\tlocalhost\n127.0.1.1\t%s\n\n::1\tlocalhost ip6-localhost ip6-loopback\n", vm.Spec.Hostname)), Mode: 0o644},
		// one-context writes the context's ETH0_DNS, which OpenNebula sets to
		// the gateway; nothing answers DNS there, so a lookup fails at once
		// instead of leaving the VM for the host's resolver.
		"/etc/resolv.conf":   {Data: []byte("nameserver " + vm.bed.Gateway().String() + "\n"), Mode: 0o644},
		"/usr/bin/systemctl": {Data: systemctlStub, Mode: 0o755},
		"/usr/bin/kubelet":   {Data: KubeletStub(b.Version), Mode: 0o755},
		// Ahead of /usr/bin on PATH: hot-plugged disks (hotplug.go).
		"/usr/local/sbin/blkid": {Data: blkidStub, Mode: 0o755},
		"/usr/local/sbin/mount": {Data: mountStub, Mode: 0o755},
	}
	images, err := vm.bed.releaseImages()
	if err != nil {
		return err
	}
	for _, ref := range images {
		meta, _ := json.Marshal(map[string]any{"ref": ref, "id": "sha256:" + sha256Hex([]byte(ref)), "size": 1})
		files[imagesDir+"/"+ref+"/image.json"] = File{Data: meta, Mode: 0o644}
	}
	links := map[string]string{
		"/usr/bin/onekube-agent": b.Agent,
		"/usr/bin/onekubed":      b.Daemon,
		"/usr/bin/kubeadm":       filepath.Join(b.K8sDir, "kubeadm"),
		"/usr/bin/kubectl":       filepath.Join(b.K8sDir, "kubectl"),
		fakeNodePath:             b.FakeNode,
		// containerd's ctr, played by fakenode under that name.
		"/usr/bin/ctr": b.FakeNode,
	}
	// The control-plane images of the release, preloaded as the appliance
	// preloads them: each binary where the real image keeps it.
	for _, ref := range images {
		name := path.Base(ref[:strings.LastIndex(ref, ":")])
		switch name {
		case "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler":
			links[imagesDir+"/"+ref+"/rootfs/usr/local/bin/"+name] = filepath.Join(b.K8sDir, name)
		default:
			// kube-proxy, CoreDNS, pause: present, never run.
			files[imagesDir+"/"+ref+"/rootfs/.image"] = File{Data: []byte(ref + "\n"), Mode: 0o644}
		}
	}
	for p, f := range vm.Spec.Files {
		files[p] = f
	}
	for p, f := range files {
		dst, err := upperPath(disk, p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, f.Data, f.Mode); err != nil {
			return err
		}
	}
	// The programs are hard links to the cache (or the test's build
	// directory), so they go into the image's read-only layer under the
	// overlay, never into the upper directory: a VM that rewrites
	// /usr/bin/kubeadm (an upgrade installing its own) gets a copy-up, and
	// the host's cache is never written through the link.
	for p, src := range links {
		dst, err := imageLayerPath(disk, p)
		if err != nil {
			return err
		}
		if err := install(src, dst); err != nil {
			return err
		}
	}
	return nil
}

// imageLayerPath maps a path of the VM under /usr to the image layer, the
// overlay's lower directory above the host's /usr (vminit mounts it).
func imageLayerPath(disk, p string) (string, error) {
	rest, ok := strings.CutPrefix(filepath.Clean(p), "/usr/")
	if !ok {
		return "", fmt.Errorf("%s is not under /usr (the image layer)", p)
	}
	return filepath.Join(disk, "usr", "image", rest), nil
}

// upperPath maps a path of the VM to its overlay upper directory.
func upperPath(disk, p string) (string, error) {
	p = filepath.Clean(p)
	for _, top := range []string{"etc", "var", "usr"} {
		if rest, ok := strings.CutPrefix(p, "/"+top+"/"); ok {
			return filepath.Join(disk, top, "upper", rest), nil
		}
	}
	return "", fmt.Errorf("%s is not under /etc, /var or /usr (the VM's disk)", p)
}

// install hard-links a binary into the disk (the VM's /tmp hides the
// host's, so a symlink to a build directory there would dangle), copying
// when the two are on different file systems.
func install(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// KubeletStub is the kubelet stand-in that says it is version: fakenode
// reports the version of the kubelet installed, so an upgrade installs a
// stand-in of the new release (the bundle's bin/kubelet in the bed).
func KubeletStub(version string) []byte {
	return bytes.ReplaceAll(kubeletStub, []byte("@VERSION@"), []byte(version))
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ReleaseImages are the images kubeadm of dir uses for version (`kubeadm
// config images list`), which the appliance preloads.
func ReleaseImages(k8sDir, version string) ([]string, error) {
	out, err := exec.Command(filepath.Join(k8sDir, "kubeadm"), "config", "images", "list", "--kubernetes-version", version).Output()
	if err != nil {
		return nil, fmt.Errorf("kubeadm config images list --kubernetes-version %s: %w", version, err)
	}
	return strings.Fields(string(out)), nil
}

// releaseImages is ReleaseImages of the bed's release, asked once.
func (b *Bed) releaseImages() ([]string, error) {
	b.imagesOnce.Do(func() { b.images, b.imagesErr = ReleaseImages(b.o.Bins.K8sDir, b.o.Bins.Version) })
	return b.images, b.imagesErr
}
