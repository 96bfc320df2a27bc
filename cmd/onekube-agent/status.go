package main

import (
	"encoding/json"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/onekube/onekube/agent"
	"github.com/onekube/onekube/agent/serve/servestatus"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/cmd/internal/agentcli"
)

func newStatusCommand(stdout io.Writer) *cobra.Command {
	var root string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print what the agent knows: role, phase, last error, published keys",
		Long: "status reads the agent's state file, and on a master serve's status file. Tokens\n" +
			"are masked (serve shows a join token's expiry, never the token), errors were\n" +
			"redacted when recorded, and every value shown is masked again for anything shaped\n" +
			"like a join token or its secret half, in any case, so the output is safe to share.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			st, err := agent.ReadStatus(system.Root(root))
			if err != nil {
				return agentcli.RunFailure{Err: err}
			}
			// A master running serve adds who acts, the join token's
			// expiry, waiting VMs and Nodes without a VM.
			sv, svErr := servestatus.ReadStatus(system.Root(root).Path(servestatus.StatusFile))
			if svErr != nil {
				sv = nil
			}
			if asJSON {
				err = writeStatusJSON(stdout, st, sv)
			} else {
				err = st.WriteText(stdout)
				if err == nil && sv != nil {
					err = sv.WriteText(stdout, time.Now())
				}
			}
			if err != nil {
				return agentcli.RunFailure{Err: err}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&root, "root", "/", "directory every path is joined to")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// writeStatusJSON is the agent's status with serve's beside it.
func writeStatusJSON(w io.Writer, st *agent.Status, sv *servestatus.Status) error {
	out := struct {
		*agent.Status
		Serve *servestatus.Status `json:"serve,omitempty"`
	}{st, sv}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
