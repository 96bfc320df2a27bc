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
	"os/signal"
	"syscall"
	"time"
)

func main() {
	var (
		imageDir = flag.String("image-dir", "", "directory holding the binaries that container images stand for (kube-apiserver, etcd, ...)")
		socket   = flag.String("cri-socket", "/run/containerd/containerd.sock", "CRI socket to serve")
		state    = flag.String("unit-state", "/run/systemd-stub/kubelet", "file the systemctl stand-in keeps while kubelet.service is active")
		logDir   = flag.String("pod-log-dir", "/var/log/pods", "where container output goes")
		version  = flag.String("kubelet-version", "v1.37.2", "version the node reports")
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
	superviseKubelet(ctx, *state, rt, *version, logf)
	logf("shutting down: stopping every container")
	srv.Stop()
	rt.stopAll(5 * time.Second)
	_ = os.Remove(*socket)
}
