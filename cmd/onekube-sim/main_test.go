package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onekube/onekube/context/onegatesim"
)

func writeTemplate(t *testing.T, gate bool) string {
	t.Helper()
	doc := `{"name":"s","deployment":"straight","ready_status_gate":` + map[bool]string{true: "true", false: "false"}[gate] + `,
	 "user_inputs":{"ONEAPP_K8S_PORT":"O|number|API port||6443"},
	 "roles":[{"name":"master","type":"vm","template_id":1,"cardinality":1},
	          {"name":"worker","type":"vm","template_id":2,"cardinality":2,"parents":["master"]}]}`
	p := filepath.Join(t.TempDir(), "t.json")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestServe(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		code int
		out  []string
	}{
		{"no command", nil, exitUsage, nil},
		{"no template", []string{"serve"}, exitUsage, []string{"--template is required"}},
		{"until-running needs timeout", []string{"serve", "--template", "x", "--until-running"}, exitUsage, nil},
		{"inputs without values", []string{"serve", "--template", writeTemplate(t, false), "--until-running", "--timeout", "5s"}, exitFailure, []string{"User Inputs"}},
		{"runs to RUNNING", []string{"serve", "--template", writeTemplate(t, false), "--defaults", "--dir", dir, "--until-running", "--timeout", "5s"}, 0,
			[]string{"onegate endpoint http://127.0.0.1:", "vm 102 worker_1_(service_1) role=worker", filepath.Join(dir, "vm-100", "context.sh"), "service 1 RUNNING", "timeline:", "service-state service=1 RUNNING"}},
		{"gate times out", []string{"serve", "--template", writeTemplate(t, true), "--defaults", "--until-running", "--timeout", "100ms", "--oneflow", "7"}, exitFailure, []string{"deadline exceeded"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			if code := run(context.Background(), c.args, &out); code != c.code {
				t.Fatalf("exit %d, want %d; output:\n%s", code, c.code, out.String())
			}
			for _, s := range c.out {
				if !strings.Contains(out.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, out.String())
				}
			}
		})
	}
	b, err := os.ReadFile(filepath.Join(dir, "vm-100", "context.sh"))
	if err != nil || !strings.Contains(string(b), "ONEAPP_K8S_PORT='6443'") {
		t.Errorf("context.sh: %s %v", b, err)
	}
}

// The cooldown defaults to OneFlow's :default_cooldown: (300 s).
func TestServeCooldownDefault(t *testing.T) {
	f, err := parseServe([]string{"--template", "t.json"}, &bytes.Buffer{})
	if err != nil || f.cooldown != onegatesim.DefaultCooldown {
		t.Errorf("cooldown %s, %v; want %s", f.cooldown, err, onegatesim.DefaultCooldown)
	}
}
