package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/onekube/onekube/cmd/internal/agentcli"
)

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	return agentcli.NewRoot("onekubed",
		"Keep a onekube Kubernetes cluster alive after bootstrap",
		"onekubed runs the long-lived parts of a onekube VM once onekube-agent bootstrap\n"+
			"has done its work: serve on the masters (join tokens, node clean-up, kubeconfig\n"+
			"requests), lb on every node (the local API load balancer), and leave as the VM\n"+
			"shuts down (cordon, drain, delete the Node).",
		stdout, stderr,
		newServeCommand(stderr), newLBCommand(stderr), newLeaveCommand(stdout, stderr), newUpgradeNodeCommand(stderr))
}
