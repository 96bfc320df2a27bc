package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/onekube/onekube/agent/internal/standin/env"
)

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
	for _, f := range []string{adminConfFile, kubeletConfFile, "/etc/kubernetes/pki", manifestsDir, "/var/lib/etcd"} {
		if err := os.RemoveAll(env.Path(root, f)); err != nil {
			return fmt.Errorf("[reset] removing %s: %w", f, err)
		}
	}
	// The node is gone; fault counters stay, so "join:2" spans resets.
	if err := env.SetNodes(root, nil); err != nil {
		return err
	}
	fmt.Fprintln(out, "[reset] Deleted contents of the etcd data directory: /var/lib/etcd")
	fmt.Fprintln(out, "[reset] Deleting files: [/etc/kubernetes/admin.conf /etc/kubernetes/kubelet.conf]")
	return nil
}
