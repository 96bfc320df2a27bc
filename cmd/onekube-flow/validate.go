package main

import (
	"fmt"

	"github.com/onekube/onekube/flow"
	"github.com/spf13/cobra"
)

func (a *app) validateCmd() *cobra.Command {
	var oneflow, nodeNet string
	cmd := &cobra.Command{
		Use:   "validate [FILE|-]",
		Short: "Check a OneFlow service template (6.x or 7.x)",
		Long: `Check a service template, rendered or hand-written, against the OneFlow
server's rules for its version (auto-detected or forced with --oneflow), and
the problems the server does not catch: duplicate JSON keys, missing or
cyclic parents, a ${role.…} reference it would blank because the role is
not a parent, roles that never deploy, an even master count, overlapping
CIDRs, malformed user inputs, a node name prefix or NIC selector the agent
would refuse, 6.x/7.x mixes, and what the server silently rewrites (the
marketplace-exported form of a 7.x template, a 6.x role converted to
template_id 0). Prints one problem per line:

  <error|warning> <json path>: <message>

Exits 1 when any problem is an error. Reads stdin without FILE or with -.`,
		Example: `  onekube-flow validate service.json
  onekube-flow render | onekube-flow validate
  onekube-flow validate --oneflow 6 --node-network 192.168.150.0/24 old.json`,
		Args: rangeArgs(0, 1),
		RunE: func(_ *cobra.Command, args []string) error {
			v, err := parseVersion(oneflow, true)
			if err != nil {
				return err
			}
			name := "-"
			if len(args) > 0 {
				name = args[0]
			}
			doc, err := a.readInput(name)
			if err != nil {
				return fmt.Errorf("reading the service template: %w", err)
			}
			ps := flow.Validate(doc, flow.ValidateOptions{Version: v, NodeNetwork: nodeNet})
			errs := 0
			for _, p := range ps {
				fmt.Fprintln(a.stdout, printable(p.String(), maxErrorRunes))
				if p.Severity == flow.Error {
					errs++
				}
			}
			fmt.Fprintf(a.stderr, "%d errors, %d warnings\n", errs, len(ps)-errs)
			if errs > 0 {
				return errQuiet
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&oneflow, "oneflow", "auto", "data model: auto, 6 or 7")
	cmd.Flags().StringVar(&nodeNet, "node-network", "", "the nodes' CIDR, checked against the pod and service networks")
	_ = cmd.RegisterFlagCompletionFunc("oneflow", cobra.FixedCompletions([]string{"auto", "6", "7"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}
