//go:build realbed

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/testbed"
)

// upgradeFrom is the release the bed's upgrade clusters start at.
const upgradeFrom = "v1.36.3"

// bundleMount is where the test mounts the attached bundle in a VM.
const bundleMount = "/run/onekube/bundle"

// TestBedUpgrade proves the bed can carry an in-place kubeadm upgrade of
// a cluster, 1.36.3 to 1.37.2, the air-gapped way (issue 21): the bundle
// built by appliance/bundle.sh is hot-plugged into each VM, found by its
// label, mounted read-only, checked against its manifest, its binaries
// installed and its images imported with ctr; then the real kubeadm 1.37.2
// runs `upgrade plan` and `upgrade apply` on the master (API server,
// etcd 3.6 to 3.7, static pods restarted on their new manifests) and
// `upgrade node` on the worker, and each kubelet, restarted, reports the
// installed release. kubeadm is driven directly: the upgrade executor's
// test builds on this one.
func TestBedUpgrade(t *testing.T) {
	from, err := bins.At(upgradeFrom)
	if err != nil && bins.Agent != "" {
		t.Fatalf("%v (make testbed builds %s too)", err, upgradeFrom)
	}
	b := newBedWith(t, from) // skips, or fails under CI, without the bed
	to := bins
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	start := time.Now()
	step := func(what string) {
		t.Logf("[%5.1fs] %s", time.Since(start).Seconds(), what)
	}

	// The bundle builds while the cluster comes up.
	img := filepath.Join(t.TempDir(), "onekube-bundle-"+to.Version+".img")
	type built struct {
		sum string
		err error
		d   time.Duration
	}
	bundle := make(chan built, 1)
	go func() {
		s := time.Now()
		sum, err := testbed.BuildBundle(ctx, to, img)
		bundle <- built{sum, err, time.Since(s)}
	}()

	cp := bootVM(t, b, "cp", "192.0.2.10")
	c, out, err := b.InitControlPlane(ctx, cp, testbed.NodeOptions{NodeName: "cp-10"})
	if err != nil {
		t.Fatalf("kubeadm init %s: %v\n%s", from.Version, err, out)
	}
	w := bootVM(t, b, "w", "192.0.2.11")
	if out, err := c.Join(ctx, w, testbed.NodeOptions{NodeName: "w-11"}); err != nil {
		t.Fatalf("kubeadm join: %v\n%s", err, out)
	}
	cfg, err := c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	nodes := map[string]string{"cp-10": "192.0.2.10", "w-11": "192.0.2.11"}
	waitReady(t, client, nodes)
	waitKubelets(t, client, from.Version, "cp-10", "w-11")
	step("cluster at " + from.Version)

	// No bundle before the attach: neither blkid nor mount find it.
	run := func(vm *testbed.VM, name string, args ...string) string {
		t.Helper()
		out, err := vm.Run(ctx, name, args...)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return out
	}
	mustFail := func(vm *testbed.VM, want string, name string, args ...string) {
		t.Helper()
		if out, err := vm.Run(ctx, name, args...); err == nil || !strings.Contains(out, want) {
			t.Fatalf("%s %s = %v %q; want a failure with %q", name, strings.Join(args, " "), err, out, want)
		}
	}
	run(cp, "mkdir", "-p", bundleMount)
	mustFail(cp, "", "blkid", "-L", testbed.BundleLabel)
	mustFail(cp, "can't find LABEL="+testbed.BundleLabel, "mount", "-o", "ro", "LABEL="+testbed.BundleLabel, bundleMount)
	mustFail(cp, "unrecognized image format", "ctr", "-n", "k8s.io", "images", "import", "/etc/hostname")

	bb := <-bundle
	if bb.err != nil {
		t.Fatal(bb.err)
	}
	step(fmt.Sprintf("bundle built in %s (manifest %s…)", bb.d.Round(100*time.Millisecond), bb.sum[:12]))

	// install attaches the bundle, mounts it by label, checks every file
	// against the manifest, installs the binaries and imports the images,
	// then unmounts and detaches it.
	install := func(vm *testbed.VM) {
		t.Helper()
		if err := vm.AttachDisk("vdb", img); err != nil {
			t.Fatal(err)
		}
		if dev := strings.TrimSpace(run(vm, "blkid", "-L", testbed.BundleLabel)); dev != "/dev/vdb" {
			t.Fatalf("blkid -L %s = %q, want /dev/vdb", testbed.BundleLabel, dev)
		}
		run(vm, "mkdir", "-p", bundleMount)
		run(vm, "mount", "-o", "ro", "LABEL="+testbed.BundleLabel, bundleMount)
		data, err := vm.ReadFile(bundleMount + "/onekube-bundle.json")
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			KubernetesVersion string            `json:"kubernetesVersion"`
			Files             map[string]string `json:"files"`
		}
		if err := json.Unmarshal(data, &m); err != nil || m.KubernetesVersion != to.Version {
			t.Fatalf("manifest %s: %v", data, err)
		}
		if sum := sha256Hex(data); sum != bb.sum {
			t.Fatalf("mounted manifest sha256 %s, built %s", sum, bb.sum)
		}
		var check strings.Builder
		var images []string
		for f, sum := range m.Files {
			fmt.Fprintf(&check, "%s  %s\n", sum, f)
			if strings.HasPrefix(f, "images/") {
				images = append(images, f)
			}
		}
		sort.Strings(images)
		if err := vm.WriteFile("/tmp/bundle.sha256", []byte(check.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		run(vm, "sh", "-c", "cd "+bundleMount+" && sha256sum --quiet -c /tmp/bundle.sha256")
		if out, err := vm.Run(ctx, "touch", bundleMount+"/x"); err == nil {
			t.Fatalf("the bundle is writable: %s", out)
		}
		for _, p := range []string{"kubeadm", "kubelet", "kubectl"} {
			run(vm, "install", "-m", "0755", bundleMount+"/bin/"+p, "/usr/bin/"+p)
		}
		for _, f := range images {
			run(vm, "ctr", "-n", "k8s.io", "images", "import", bundleMount+"/"+f)
		}
		run(vm, "umount", bundleMount)
		if err := vm.DetachDisk("vdb"); err != nil {
			t.Fatal(err)
		}
		mustFail(vm, "", "blkid", "-L", testbed.BundleLabel)
		mustFail(vm, "does not exist", "mount", "-o", "ro", "/dev/vdb", bundleMount)
		if v := strings.TrimSpace(run(vm, "kubeadm", "version", "-o", "short")); v != to.Version {
			t.Fatalf("installed kubeadm is %s", v)
		}
	}
	ignore := "--ignore-preflight-errors=" + strings.Join(append(testbed.IgnoredPreflightErrors(), "none"), ",")

	install(cp)
	step("bundle installed on the master")
	if images := run(cp, "ctr", "-n", "k8s.io", "images", "ls", "-q"); !strings.Contains(images, "registry.k8s.io/kube-apiserver:"+to.Version) {
		t.Fatalf("images after the import:\n%s", images)
	}
	plan := run(cp, "kubeadm", "upgrade", "plan", to.Version, ignore)
	if !strings.Contains(plan, "kubeadm upgrade apply "+to.Version) {
		t.Fatalf("kubeadm upgrade plan:\n%s", plan)
	}
	step("kubeadm upgrade plan")
	out, err = cp.Run(ctx, "kubeadm", "upgrade", "apply", "-y", to.Version, ignore)
	if err != nil || !strings.Contains(out, "SUCCESS! A control plane node of your cluster was upgraded to \""+to.Version+"\"") {
		t.Fatalf("kubeadm upgrade apply: %v\n%s", err, out)
	}
	step("kubeadm upgrade apply " + to.Version)
	run(cp, "systemctl", "restart", "kubelet")

	install(w)
	step("bundle installed on the worker")
	run(w, "kubeadm", "upgrade", "node", ignore)
	run(w, "systemctl", "restart", "kubelet")
	step("kubeadm upgrade node")

	waitKubelets(t, client, to.Version, "cp-10", "w-11")
	waitReady(t, client, nodes)
	sv, err := client.Discovery().ServerVersion()
	if err != nil || sv.GitVersion != to.Version {
		t.Fatalf("API server version %v, %v", sv, err)
	}
	etcdImage := ""
	for _, name := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"} {
		pod, err := client.CoreV1().Pods("kube-system").Get(ctx, name+"-cp-10", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		image := pod.Spec.Containers[0].Image
		if name == "etcd" {
			etcdImage = image
		} else if !strings.HasSuffix(image, ":"+to.Version) {
			t.Errorf("%s runs %s", name, image)
		}
	}
	if want := "registry.k8s.io/etcd:3.7.0-0"; etcdImage != want {
		t.Errorf("etcd runs %s, want %s", etcdImage, want)
	}
	step("every Node reports " + to.Version)
}

// waitKubelets waits until each node's kubelet reports version.
func waitKubelets(t *testing.T, c kubernetes.Interface, version string, names ...string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var wrong []string
		for _, n := range names {
			node, err := c.CoreV1().Nodes().Get(context.Background(), n, metav1.GetOptions{})
			if err != nil || node.Status.NodeInfo.KubeletVersion != version {
				got := "?"
				if err == nil {
					got = node.Status.NodeInfo.KubeletVersion
				}
				wrong = append(wrong, n+"="+got)
			}
		}
		if len(wrong) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubelets not at %s: %v", version, wrong)
		}
		time.Sleep(time.Second)
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
