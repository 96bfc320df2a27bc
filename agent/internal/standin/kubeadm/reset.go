package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	"github.com/onekube/onekube/agent/internal/standin/env"
)

// runReset does what kubeadm reset's phases do to a node
// (cmd/kubeadm/app/cmd/phases/reset): remove-etcd-member empties the etcd
// data directory (the default one when no config says otherwise);
// cleanup-node stops the kubelet, removes the containers, empties
// /etc/kubernetes/manifests, /var/lib/kubelet and /etc/kubernetes/pki (the
// directories stay) and deletes the six kubeconfigs. The Node object
// stays in the API server: it goes NotReady once its grace period is over
// (env.Node.Ready).
func runReset(args []string, out io.Writer) error {
	o, err := parseFlags("reset", args, "f", "force", "ignore-preflight-errors")
	if err != nil {
		return err
	}
	if !o.force {
		return errors.New("the stand-in has no terminal to confirm on: pass -f")
	}
	root, err := env.Root()
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "[preflight] Running pre-flight checks")
	// remove-etcd-member: a control plane leaves etcd and its store.
	if ep := env.APIServerEndpoint(root); ep != "" {
		if host, _, err := net.SplitHostPort(ep); err == nil {
			if err := env.RemoveMember(peerURL(host)); err != nil {
				fmt.Fprintf(out, "[reset] Failed to remove etcd member: %v\n", err)
			}
		}
		if err := env.ServerOf(root).Leave(root); err != nil {
			return err
		}
	}
	if err := cleanDir(root, etcdDataDir); err != nil {
		return err
	}
	fmt.Fprintln(out, "[reset] Deleted contents of the etcd data directory: "+etcdDataDir)
	fmt.Fprintln(out, "[reset] Stopping the kubelet service")
	// Fault counters stay, so "join:2" spans resets.
	if err := env.StopKubelet(root); err != nil {
		return err
	}
	dirs := []string{manifestsDir, pkiDir}
	if fileExists(env.Path(root, kubeletDir)) {
		fmt.Fprintf(out, "[reset] Unmounting mounted directories in %q\n", kubeletDir)
		dirs = []string{manifestsDir, kubeletDir, pkiDir}
	}
	fmt.Fprintf(out, "[reset] Deleting contents of directories: %v\n", dirs)
	for _, d := range dirs {
		if err := cleanDir(root, d); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "[reset] Deleting files: %v\n", kubeconfigFiles)
	for _, f := range kubeconfigFiles {
		if err := os.RemoveAll(env.Path(root, f)); err != nil {
			return fmt.Errorf("[reset] removing %s: %w", f, err)
		}
	}
	return nil
}

// cleanDir removes what a directory holds, not the directory itself; a
// missing one is nothing to do (kubeadm's phases.CleanDir).
func cleanDir(root, dir string) error {
	p := env.Path(root, dir)
	ents, err := os.ReadDir(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(p, e.Name())); err != nil {
			return fmt.Errorf("[reset] deleting contents of %s: %w", dir, err)
		}
	}
	return nil
}
