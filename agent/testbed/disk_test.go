package testbed

import (
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A VM's disk: the programs are hard links to the host's cache, so they
// must sit in the image's read-only layer and never in the overlay's upper
// directory, where a VM writing /usr/bin/kubeadm (an upgrade) would write
// through the link into the cache. The release's images are preloaded
// into the image store, each binary where its real image keeps it.
func TestPrepareDisk(t *testing.T) {
	root := t.TempDir()
	k8s := filepath.Join(root, "k8s")
	fakeK8sDir(t, k8s, "v1.36.3")
	tools := filepath.Join(root, "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	var bins Binaries
	bins.Agent, bins.Daemon, bins.FakeNode, bins.VMInit = filepath.Join(tools, "agent"), filepath.Join(tools, "daemon"), filepath.Join(tools, "fakenode"), filepath.Join(tools, "vminit")
	for _, p := range []string{bins.Agent, bins.Daemon, bins.FakeNode, bins.VMInit} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bins.Version, bins.K8sDir = "v1.36.3", k8s
	b := &Bed{o: Options{Dir: root, Bins: bins, Network: netip.MustParsePrefix("192.0.2.0/24")}}
	vm := &VM{Spec: VMSpec{Name: "cp", Hostname: ImageHostname}, bed: b, dir: filepath.Join(root, "cp")}
	if err := vm.prepareDisk(); err != nil {
		t.Fatal(err)
	}
	disk := filepath.Join(vm.dir, "disk")
	sources := map[uint64]string{}
	for _, dir := range []string{k8s, tools} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			var st syscall.Stat_t
			if err := syscall.Stat(filepath.Join(dir, e.Name()), &st); err == nil {
				sources[st.Ino] = filepath.Join(dir, e.Name())
			}
		}
	}
	for _, top := range []string{"etc", "var", "usr"} {
		_ = filepath.WalkDir(filepath.Join(disk, top, "upper"), func(p string, d fs.DirEntry, err error) error {
			var st syscall.Stat_t
			if err == nil && !d.IsDir() && syscall.Stat(p, &st) == nil {
				if src, ok := sources[st.Ino]; ok {
					t.Errorf("%s is a hard link to %s in the writable layer", p, src)
				}
			}
			return nil
		})
	}
	layer := filepath.Join(disk, "usr", "image")
	for _, want := range []string{
		"bin/kubeadm", "bin/kubectl", "bin/ctr", "bin/onekube-agent", "lib/testbed/fakenode",
		"lib/testbed/images/registry.k8s.io/kube-apiserver:v1.36.3/rootfs/usr/local/bin/kube-apiserver",
		"lib/testbed/images/registry.k8s.io/etcd:3.7.0-0/rootfs/usr/local/bin/etcd",
	} {
		if _, err := os.Stat(filepath.Join(layer, want)); err != nil {
			t.Errorf("image layer: %v", err)
		}
	}
	upper := filepath.Join(disk, "usr", "upper")
	for _, want := range []string{
		"lib/testbed/images/registry.k8s.io/kube-apiserver:v1.36.3/image.json",
		"lib/testbed/images/registry.k8s.io/coredns/coredns:v1.14.6/image.json",
		"local/sbin/blkid", "local/sbin/mount",
	} {
		if _, err := os.Stat(filepath.Join(upper, want)); err != nil {
			t.Errorf("disk: %v", err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(upper, "bin", "kubelet")); err != nil || !strings.Contains(string(b), "Kubernetes v1.36.3") {
		t.Errorf("kubelet stand-in: %q, %v", b, err)
	}
}
