// Command fakenode plays the two parts of a Kubernetes node the test bed
// cannot run for real: containerd (a CRI server on the usual socket whose
// "containers" are plain processes of the locally built binaries) and the
// kubelet (static pods, TLS bootstrap, Node registration, heartbeat, lease,
// mirror pods, pod status). kubeadm, etcd and the control plane it starts
// are the real programs. See docs/testbed.md for what is played and how
// faithfully.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// imageStoreRoot is the image store of a bed VM; ctr (this program
// under that name) imports into it.
const imageStoreRoot = "/usr/lib/testbed/images"

func main() {
	if filepath.Base(os.Args[0]) == "ctr" {
		os.Exit(ctrMain(os.Args[1:], imageStoreRoot, os.Stdout, os.Stderr))
	}
	var (
		imageDir = flag.String("image-dir", imageStoreRoot, "the image store: <dir>/<ref>/{image.json,rootfs/}")
		socket   = flag.String("cri-socket", "/run/containerd/containerd.sock", "CRI socket to serve")
		state    = flag.String("unit-state", "/run/systemd-stub/kubelet", "file the systemctl stand-in keeps while kubelet.service is active")
		logDir   = flag.String("pod-log-dir", "/var/log/pods", "where container output goes")
		version  = flag.String("kubelet-version", "", "version the node reports (default: what --kubelet-binary --version says at each kubelet start)")
		kbin     = flag.String("kubelet-binary", "/usr/bin/kubelet", "the installed kubelet, whose version the node reports")
	)
	flag.Parse()
	if *imageDir == "" {
		fmt.Fprintln(os.Stderr, "fakenode: --image-dir is required")
		os.Exit(2)
	}
	logger := log.New(os.Stderr, "fakenode: ", log.LstdFlags|log.Lmicroseconds)
	logf := logger.Printf

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	rt := newContainerRuntime(*imageDir, *logDir)
	srv, err := serveCRI(*socket, rt)
	if err != nil {
		logger.Fatal(err)
	}
	logf("CRI serving on %s", *socket)
	versionOf := func() (string, error) { return binaryVersion(*kbin) }
	if *version != "" {
		v := *version
		versionOf = func() (string, error) { return v, nil }
	}
	superviseKubelet(ctx, *state, rt, versionOf, logf)
	logf("shutting down: stopping every container")
	srv.Stop()
	rt.stopAll(5 * time.Second)
	_ = os.Remove(*socket)
}

// binaryVersion runs `BIN --version`, which a kubelet answers with
// "Kubernetes vX.Y.Z".
func binaryVersion(bin string) (string, error) {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", bin, err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 || f[0] != "Kubernetes" || !strings.HasPrefix(f[1], "v") {
		return "", fmt.Errorf("%s --version said %q, not \"Kubernetes vX.Y.Z\"", bin, strings.TrimSpace(string(out)))
	}
	return f[1], nil
}
