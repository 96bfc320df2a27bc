package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// ctrMain plays containerd's ctr for what an upgrade needs: `ctr -n k8s.io
// images import FILE`, `images ls [-q]` and `images rm REF...`. Like the
// real one, an image imported into another namespace than k8s.io is
// invisible to the CRI (and so to kubeadm and the kubelet). The image
// store is the one the CRI half serves.
func ctrMain(args []string, storeRoot string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ctr", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ns := fs.String("namespace", "default", "namespace")
	fs.StringVar(ns, "n", "default", "namespace (shorthand)")
	fs.String("address", "/run/containerd/containerd.sock", "containerd socket")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	store := imageStore{root: storeRoot}
	if *ns != "k8s.io" {
		if err := checkNamespace(*ns); err != nil {
			fmt.Fprintf(stderr, "ctr: %v\n", err)
			return 1
		}
		store.root = filepath.Join(filepath.Dir(storeRoot), "namespaces", *ns)
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fmt.Fprintln(stderr, "ctr: a command is required (this stand-in plays: images import|ls|rm, version)")
		return 1
	}
	switch rest[0] {
	case "version":
		fmt.Fprintln(stdout, "Client:\n  Version:  v2.1.4-testbed\nServer:\n  Version:  v2.1.4-testbed")
		return 0
	case "images", "image", "i":
	default:
		fmt.Fprintf(stderr, "ctr: no such command %q (this stand-in plays: images, version)\n", rest[0])
		return 1
	}
	if len(rest) < 2 {
		fmt.Fprintln(stderr, "ctr: images: a subcommand is required (import, ls, rm)")
		return 1
	}
	sub, subArgs := rest[1], rest[2:]
	switch sub {
	case "import":
		return ctrImport(subArgs, store, stdout, stderr)
	case "ls", "list":
		quiet := false
		for _, a := range subArgs {
			if a != "-q" && a != "--quiet" {
				fmt.Fprintf(stderr, "ctr: images ls: unknown flag %s\n", a)
				return 1
			}
			quiet = true
		}
		if !quiet {
			fmt.Fprintln(stdout, "REF\tTYPE\tDIGEST\tSIZE")
		}
		for _, m := range store.list() {
			if quiet {
				fmt.Fprintln(stdout, m.Ref)
			} else {
				fmt.Fprintf(stdout, "%s\tapplication/vnd.docker.distribution.manifest.v2+json\t%s\t%d\n", m.Ref, m.ID, m.Size)
			}
		}
		return 0
	case "rm", "remove", "delete", "del":
		code := 0
		for _, ref := range subArgs {
			if err := store.remove(ref); err != nil {
				fmt.Fprintf(stderr, "ctr: %v\n", err)
				code = 1
				continue
			}
			fmt.Fprintln(stdout, ref)
		}
		return code
	default:
		fmt.Fprintf(stderr, "ctr: images: no such subcommand %q\n", sub)
		return 1
	}
}

// ctrImport is `ctr images import [--all-platforms] [--digests] FILE`.
func ctrImport(args []string, store imageStore, stdout, stderr io.Writer) int {
	var files []string
	for _, a := range args {
		switch {
		case a == "--all-platforms" || a == "--digests" || a == "--local" || a == "--local=true":
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(stderr, "ctr: images import: flag %s is not played\n", a)
			return 1
		default:
			files = append(files, a)
		}
	}
	if len(files) != 1 {
		fmt.Fprintln(stderr, "ctr: images import: exactly one archive is required (use - for stdin is not played)")
		return 1
	}
	imported, err := importArchive(files[0], store)
	for _, m := range imported {
		fmt.Fprintf(stdout, "unpacking %s (%s)...done\n", m.Ref, m.ID)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ctr: %v\n", err)
		return 1
	}
	return 0
}

func checkNamespace(ns string) error {
	if ns == "" || strings.ContainsAny(ns, "/.") {
		return fmt.Errorf("namespace %q: invalid", ns)
	}
	return nil
}
