package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/onekube/onekube/cmd/internal/agentcli"
)

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	return agentcli.NewRoot("onekube-agent",
		"Bootstrap this VM into a onekube Kubernetes cluster",
		"onekube-agent runs once at boot in every VM of a onekube OneFlow service.\n"+
			"The master role's first VM runs kubeadm init and publishes the join data through\n"+
			"OneGate; every other VM waits for it and runs kubeadm join. What keeps the\n"+
			"cluster alive afterwards (serve, lb, leave) is onekubed.",
		stdout, stderr,
		append([]*cobra.Command{newBootstrapCommand(stderr), newStatusCommand(stdout)}, newMovedCommands()...)...)
}
