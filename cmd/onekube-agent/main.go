// Command onekube-agent runs once at boot in every VM of a onekube service:
// it initializes the cluster on the first master, or waits for it and
// joins. It links no Kubernetes client (footprint_test.go): what runs for
// the life of the cluster (serve, lb, leave) is onekubed.
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
