package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/onekube/onekube/cmd/internal/version"
)

func newVersionCommand(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the agent's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(stdout, version.String())
			return err
		},
	}
}
