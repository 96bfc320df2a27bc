package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// options are the flags the stand-in understands; anything else is refused
// as kubeadm's cobra would, so a wrong flag in the agent fails the e2e test.
type options struct {
	config         string
	skipTokenPrint bool
	skipKeyPrint   bool
	uploadCerts    bool
	force          bool
	output         string
	ignore         string
	verbosity      int
}

// parseFlags parses args for cmd, allowing only the named flags.
func parseFlags(cmd string, args []string, allowed ...string) (options, error) {
	var o options
	fs := flag.NewFlagSet("kubeadm "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.config, "config", "", "")
	fs.BoolVar(&o.skipTokenPrint, "skip-token-print", false, "")
	fs.BoolVar(&o.skipKeyPrint, "skip-certificate-key-print", false, "")
	fs.BoolVar(&o.uploadCerts, "upload-certs", false, "")
	fs.BoolVar(&o.force, "f", false, "")
	fs.BoolVar(&o.force, "force", false, "")
	fs.StringVar(&o.output, "o", "", "")
	fs.StringVar(&o.output, "output", "", "")
	fs.StringVar(&o.ignore, "ignore-preflight-errors", "", "")
	fs.IntVar(&o.verbosity, "v", 0, "")
	if err := fs.Parse(args); err != nil {
		if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
			return o, fmt.Errorf("kubeadm %s: unknown flag: -%s", cmd, name)
		}
		return o, fmt.Errorf("kubeadm %s: %w", cmd, err)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("kubeadm %s: unexpected arguments %q", cmd, fs.Args())
	}
	ok := map[string]bool{"v": true}
	for _, a := range allowed {
		ok[a] = true
	}
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		if !ok[f.Name] {
			bad = append(bad, "--"+f.Name)
		}
	})
	if len(bad) > 0 {
		return o, fmt.Errorf("kubeadm %s: unknown flag: %s", cmd, strings.Join(bad, ", "))
	}
	return o, nil
}

// ignored reports whether preflight check name was waived with
// --ignore-preflight-errors (a comma list, "all" waiving everything).
func (o options) ignored(name string) bool {
	for _, n := range strings.Split(o.ignore, ",") {
		n = strings.TrimSpace(n)
		if strings.EqualFold(n, "all") || strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// withIgnored adds a config's nodeRegistration.ignorePreflightErrors to the
// flag's list, as kubeadm does (the two are merged).
func (o options) withIgnored(fromConfig []string) options {
	if len(fromConfig) > 0 {
		o.ignore = strings.Join(append([]string{o.ignore}, fromConfig...), ",")
	}
	return o
}
