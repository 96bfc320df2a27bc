package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/serve"
	vmcontext "github.com/onekube/onekube/context"
)

// gateOnly has no VM actions; gateActs has them.
type gateOnly struct{ gate.OneGate }

type gateActs struct{ gate.OneGate }

func (gateActs) Action(context.Context, int, string, map[string]string) error { return nil }
func (gateActs) ScaleRole(context.Context, string, int) error                 { return nil }

// ONEAPP_K8S_REMEDIATION from CONTEXT: on by default, off when asked or
// unreadable, and off while the OneGate client cannot act on VMs.
func TestRemediateLoopSwitch(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	tests := []struct {
		name  string
		value string
		og    gate.OneGate
		off   string // substring of Off; "" on
	}{
		{"default on", "", gateActs{}, ""},
		{"on", "on", gateActs{}, ""},
		{"off", "OFF", gateActs{}, "=off"},
		{"unreadable", "paused", gateActs{}, "unreadable"},
		{"no VM actions", "on", gateOnly{}, "cannot act on VMs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := vmcontext.Vars{vmcontext.KeyRemediation: tt.value}
			r := remediateLoop(serveFlags{}, tt.og, nil, nil, nil, 10, "master", vars, log)
			if (tt.off == "") != (r.Off == "") || !strings.Contains(r.Off, tt.off) {
				t.Errorf("Off = %q, want ~%q", r.Off, tt.off)
			}
			if _, acts := tt.og.(serve.VMActor); acts != (r.Actor != nil) {
				t.Errorf("Actor %v", r.Actor)
			}
		})
	}
}

// The production OneGate client acts on VMs: remediation is on with it.
func TestRemediateLoopActsWithTheRealClient(t *testing.T) {
	og, err := gate.NewClient(gate.Config{Creds: vmcontext.Credentials{Endpoint: "http://127.0.0.1:1", VMID: 10, Token: vmcontext.NewSecret("t")}})
	if err != nil {
		t.Fatal(err)
	}
	r := remediateLoop(serveFlags{}, og, nil, nil, nil, 10, "master", vmcontext.Vars{}, slog.New(slog.DiscardHandler))
	if r.Actor == nil || r.Off != "" {
		t.Fatalf("Actor %v, Off %q: remediation off with the production client", r.Actor, r.Off)
	}
}

// The bed shortens remediation's waits through hidden flags.
func TestServeRemediateFlags(t *testing.T) {
	cmd := newServeCommand(io.Discard)
	if err := cmd.ParseFlags([]string{"--remediate-action-timeout=21s", "--remediate-recover-wait=22s", "--remediate-scale-retry=23s", "--remediate-drain-timeout=24s", "--remediate-unhealthy-after=25s"}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"remediate-action-timeout": "21s", "remediate-recover-wait": "22s", "remediate-scale-retry": "23s", "remediate-drain-timeout": "24s"} {
		if got := cmd.Flags().Lookup(name).Value.String(); got != want {
			t.Errorf("--%s = %s, want %s", name, got, want)
		}
	}
}
