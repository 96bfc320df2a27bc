package main

import (
	"context"
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
