package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/onekube/onekube/agent"
	"github.com/onekube/onekube/agent/system"
)

func newStatusCommand(stdout io.Writer) *cobra.Command {
	var root string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print what the agent knows: role, phase, last error, published keys",
		Long: "status reads the agent's state file. The bootstrap token is masked and errors\n" +
			"were redacted when recorded, so the output is safe to share.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			st, err := agent.ReadStatus(system.Root(root))
			if err != nil {
				return runFailure{err}
			}
			if asJSON {
				err = st.WriteJSON(stdout)
			} else {
				err = st.WriteText(stdout)
			}
			if err != nil {
				return runFailure{err}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&root, "root", "/", "directory every path is joined to")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
