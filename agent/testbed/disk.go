package testbed

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

var (
	//go:embed stubs/systemctl
	systemctlStub []byte
	//go:embed stubs/kubelet
	kubeletStub []byte
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
		"/usr/bin/kubelet":   {Data: bytes.ReplaceAll(kubeletStub, []byte("@VERSION@"), []byte(b.Version)), Mode: 0o755},
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
	links := map[string]string{
		"/usr/bin/onekube-agent": b.Agent,
		"/usr/bin/onekubed":      b.Daemon,
		"/usr/bin/kubeadm":       filepath.Join(b.K8sDir, "kubeadm"),
		"/usr/bin/kubectl":       filepath.Join(b.K8sDir, "kubectl"),
		fakeNodePath:             b.FakeNode,
	}
	for _, img := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		links[imagesDir+"/"+img] = filepath.Join(b.K8sDir, img)
	}
	for p, src := range links {
		dst, err := upperPath(disk, p)
		if err != nil {
			return err
		}
		if err := install(src, dst); err != nil {
			return err
		}
	}
	return nil
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
