// Command onekube-flow renders, validates and registers the OneFlow service
// template and role VM templates of a kubeadm Kubernetes cluster on
// OpenNebula. The work is done by package flow; this is wiring only.
package main

import (
	"os"

	"github.com/onekube/onekube/flow/register"
)

func main() {
	home, _ := os.UserHomeDir()
	a := &app{
		stdin:  os.Stdin,
		stdout: os.Stdout,
		stderr: os.Stderr,
		env:    register.Env{Getenv: os.Getenv, ReadFile: os.ReadFile, Home: home},
	}
	os.Exit(a.run(os.Args[1:]))
}
