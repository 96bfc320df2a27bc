// Command onekubed runs for the life of a onekube cluster in its VMs:
// serve on every master, lb on every node, leave as a VM shuts down. It
// links client-go, kubectl's drain and etcd's client; onekube-agent, which
// bootstraps the VM once at boot, links none of them.
package main

import (
	"io"
	"os"

	"github.com/onekube/onekube/cmd/internal/agentcli"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and maps the outcome to an exit code.
func run(args []string, stdout, stderr io.Writer) int {
	return agentcli.Execute(newRootCommand(stdout, stderr), args, stderr)
}
