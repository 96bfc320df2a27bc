package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/onekube/onekube/cmd/internal/agentcli"
)

func TestExitCodes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	cases := map[string]struct {
		args []string
		code int
		out  string // substring of stdout+stderr
	}{
		"version":                       {[]string{"version"}, agentcli.ExitOK, ""},
		"--version":                     {[]string{"--version"}, agentcli.ExitOK, "devel"},
		"unknown command":               {[]string{"bootstrap"}, agentcli.ExitUsage, "unknown command"},
		"serve bad flag":                {[]string{"serve", "--cleanup-grace", "soon"}, agentcli.ExitUsage, "cleanup-grace"},
		"serve bad log level":           {[]string{"serve", "--log-level", "loud", "--root", root}, agentcli.ExitUsage, "--log-level"},
		"serve wait limit not positive": {[]string{"serve", "--wait-limit", "0s", "--root", root}, agentcli.ExitUsage, "--wait-limit must be positive"},
		"serve before bootstrap":        {[]string{"serve", "--root", root, "--log-format", "text"}, agentcli.ExitFailure, "bootstrap has not finished"},
		"lb bad log format":             {[]string{"lb", "--log-format", "xml", "--root", root}, agentcli.ExitUsage, "log format"},
		"lb stray argument":             {[]string{"lb", "x"}, agentcli.ExitUsage, "unknown command"},
		"leave bad flag":                {[]string{"leave", "--budget", "soon"}, agentcli.ExitUsage, "budget"},
		"leave before bootstrap":        {[]string{"leave", "--root", root, "--log-format", "text"}, agentcli.ExitOK, "nothing to leave"},
		"leave uncordon, no state":      {[]string{"leave", "--uncordon", "--root", root, "--log-format", "text"}, agentcli.ExitOK, "nothing to leave"},
		"help names the subcommand":     {[]string{"--help"}, agentcli.ExitOK, "serve"},
	}
	for name, c := range cases {
		var out, errb bytes.Buffer
		code := run(c.args, &out, &errb)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", name, code, c.code, out.String(), errb.String())
		}
		if !strings.Contains(out.String()+errb.String(), c.out) {
			t.Errorf("%s: output lacks %q:\n%s%s", name, c.out, out.String(), errb.String())
		}
	}
}
