// Package simcluster runs a simulated onekube service on one machine: the
// OneGate/OneFlow simulator in-process, flow's rendered service template,
// and one real onekube-agent process per VM (onekubed for serve and leave)
// with the kubeadm and kubectl stand-ins first on PATH. The end-to-end
// tests and `make demo` use it; it is test tooling and never shipped.
package simcluster

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Binaries are the programs a cluster runs.
type Binaries struct {
	Agent      string // the onekube-agent binary (bootstrap, status)
	Daemon     string // the onekubed binary (serve, lb, leave)
	StandinDir string // holds the kubeadm and kubectl stand-ins
}

// For is the program that runs a subcommand, as the units run it:
// onekubed's serve, lb and leave, onekube-agent's everything else.
func (b Binaries) For(args []string) string {
	if len(args) > 0 {
		switch args[0] {
		case "serve", "lb", "leave":
			return b.Daemon
		}
	}
	return b.Agent
}

// Build compiles onekube-agent, onekubed and the stand-ins into dir with
// two go builds (the module root is found from the go command).
func Build(dir string) (Binaries, error) {
	root, err := moduleRoot()
	if err != nil {
		return Binaries{}, err
	}
	agentDir := filepath.Join(dir, "agent")
	standins := filepath.Join(dir, "standin")
	for _, d := range []string{agentDir, standins} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return Binaries{}, err
		}
	}
	builds := []struct {
		out  string
		pkgs []string
	}{
		// -tags simclock: both programs read the simulation's virtual
		// clock when ONEKUBE_SIMCLOCK names it (living.go); otherwise the
		// wall clock.
		{agentDir, []string{"-tags", "simclock", "./cmd/onekube-agent", "./cmd/onekubed"}},
		{standins, []string{"./agent/internal/standin/kubeadm", "./agent/internal/standin/kubectl"}},
	}
	for _, b := range builds {
		cmd := exec.Command("go", append([]string{"build", "-o", b.out + "/"}, b.pkgs...)...)
		cmd.Dir = root
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return Binaries{}, fmt.Errorf("go build %s: %w\n%s", strings.Join(b.pkgs, " "), err, out.String())
		}
	}
	return Binaries{Agent: filepath.Join(agentDir, "onekube-agent"), Daemon: filepath.Join(agentDir, "onekubed"), StandinDir: standins}, nil
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module root: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside the onekube module")
	}
	return filepath.Dir(mod), nil
}
