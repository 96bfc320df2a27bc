package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/onekube/onekube/cmd/internal/version"
)

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "onekube-agent",
		Short: "Bootstrap this VM into a onekube Kubernetes cluster",
		Long: "onekube-agent runs once at boot in every VM of a onekube OneFlow service.\n" +
			"The master role's first VM runs kubeadm init and publishes the join data through\n" +
			"OneGate; every other VM waits for it and runs kubeadm join.",
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("{{.Version}}\n") // the bare version, as the version command prints it
	root.AddCommand(newBootstrapCommand(stderr), newServeCommand(stderr), newLBCommand(stderr), newLeaveCommand(stdout, stderr), newStatusCommand(stdout), newVersionCommand(stdout))
	return root
}
