package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// newMovedCommands are hidden stand-ins for the subcommands onekubed took
// over (issue 14): a unit or script still running `onekube-agent serve`
// gets a usage error that names the new command, not "unknown command".
func newMovedCommands() []*cobra.Command {
	var cmds []*cobra.Command
	for _, name := range []string{"serve", "lb", "leave"} {
		cmds = append(cmds, &cobra.Command{
			Use:                name,
			Hidden:             true,
			DisableFlagParsing: true,
			RunE: func(*cobra.Command, []string) error {
				return fmt.Errorf("%s moved to onekubed: run `onekubed %s` (same flags)", name, name)
			},
		})
	}
	return cmds
}
