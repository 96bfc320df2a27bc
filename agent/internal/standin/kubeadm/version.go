package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/onekube/onekube/agent/internal/standin/env"
)

func runVersion(args []string, out io.Writer) error {
	o, err := parseFlags("version", args, "o", "output")
	if err != nil {
		return err
	}
	v := env.Version()
	switch o.output {
	case "short":
		fmt.Fprintln(out, v)
	case "":
		major, minor, _ := strings.Cut(strings.TrimPrefix(v, "v"), ".")
		minor, _, _ = strings.Cut(minor, ".")
		fmt.Fprintf(out, "kubeadm version: &version.Info{Major:%q, Minor:%q, GitVersion:%q, GitTreeState:\"clean\", Compiler:\"gc\"}\n", major, minor, v)
	default:
		return fmt.Errorf("invalid output format: %s", o.output)
	}
	return nil
}

// runConfig implements `kubeadm config validate --config F`.
func runConfig(args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "validate" {
		return errors.New("the stand-in only implements `kubeadm config validate`")
	}
	o, err := parseFlags("config validate", args[1:], "config")
	if err != nil {
		return err
	}
	if o.config == "" {
		return errors.New("--config is required")
	}
	root, _ := env.Root() // optional here: validate writes nothing
	c, err := readConfig(env.Resolve(root, o.config))
	if err != nil {
		return err
	}
	if c.init != nil || c.cluster != nil {
		if err := validateInit(c); err != nil {
			return err
		}
	}
	if c.join != nil {
		if err := validateJoin(c); err != nil {
			return err
		}
	}
	fmt.Fprintln(out, "ok")
	return nil
}
