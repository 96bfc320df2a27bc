package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/onekube/onekube/agent/state"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/cmd/internal/agentcli"
	vmcontext "github.com/onekube/onekube/context"
)

func TestExitCodes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	cases := map[string]struct {
		args []string
		code int
		out  string // substring of stdout+stderr
	}{
		"version":                 {[]string{"version"}, agentcli.ExitOK, ""},
		"--version":               {[]string{"--version"}, agentcli.ExitOK, "devel"},
		"unknown command":         {[]string{"bogus"}, agentcli.ExitUsage, "unknown command"},
		"bad flag":                {[]string{"bootstrap", "--master-timeout", "soon"}, agentcli.ExitUsage, "master-timeout"},
		"bad log format":          {[]string{"bootstrap", "--log-format", "xml", "--root", root}, agentcli.ExitUsage, "log format"},
		"bad poll interval":       {[]string{"bootstrap", "--poll-interval", "1m", "--max-poll-interval", "1s", "--root", root}, agentcli.ExitUsage, "poll interval"},
		"bad command timeout":     {[]string{"bootstrap", "--command-timeout", "soon"}, agentcli.ExitUsage, "command-timeout"},
		"new cluster, no context": {[]string{"bootstrap", "--new-cluster", "--root", root, "--context", root + "/missing.sh", "--log-format", "text"}, agentcli.ExitFailure, "reading the VM context"},
		"stray argument":          {[]string{"status", "x"}, agentcli.ExitUsage, "unknown command"},
		"no context":              {[]string{"bootstrap", "--root", root, "--context", root + "/missing.sh", "--log-format", "text"}, agentcli.ExitFailure, "reading the VM context"},
		"status empty root":       {[]string{"status", "--root", root}, agentcli.ExitOK, "bootstrapped: no"},
		"status json":             {[]string{"status", "--json", "--root", root}, agentcli.ExitOK, `"bootstrapped": false`},
		"serve moved":             {[]string{"serve", "--root", root}, agentcli.ExitUsage, "run `onekubed serve`"},
		"leave moved":             {[]string{"leave"}, agentcli.ExitUsage, "run `onekubed leave`"},
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

func TestStatusMasksToken(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	const tok = "abcdef.0123456789abcdef"
	st := &state.State{VMID: 4, Role: "init", Phase: "done", Token: vmcontext.NewSecret(tok),
		Published: map[string]string{vmcontext.KeyPubToken: vmcontext.Mask, vmcontext.KeyReady: "YES"}}
	if err := (state.Store{Root: system.Root(root)}).Save(st); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"status", "--root", root}, &out, &errb); code != agentcli.ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if strings.Contains(out.String(), tok) || !strings.Contains(out.String(), "READY=YES") {
		t.Errorf("status output:\n%s", out.String())
	}
}
