// Command kubeadm is a test stand-in for the real kubeadm. It reads the real
// config file, decodes it strictly with kubeadm's own types, refuses what
// kubeadm would refuse (unknown fields, bad tokens, hashes and subnets,
// preflight leftovers), writes a real CA and kubeconfigs under
// $ONEKUBE_STANDIN_ROOT, and logs each invocation for the e2e tests. It runs
// no control plane. Behaviour knobs are in package env.
//
// Each simulated VM is its own host (package env): join reaches the API
// server of the host at its apiServerEndpoint, pins its CA, and registers
// its Node there, refusing a name a Ready Node already has.
//
//	kubeadm init --config F [--skip-token-print] [--skip-certificate-key-print] [--upload-certs] [--ignore-preflight-errors L]
//	kubeadm init phase upload-certs --upload-certs --config F [--skip-certificate-key-print]
//	kubeadm join --config F [--ignore-preflight-errors L]
//	kubeadm reset -f
//	kubeadm version [-o short]
//	kubeadm config validate --config F
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/onekube/onekube/agent/internal/standin/env"
)

func main() {
	entry := env.NewEntry("kubeadm", os.Args[1:])
	code := run(os.Args[1:], entry, os.Stdout, os.Stderr)
	entry.ExitCode = code
	if err := entry.Append(); err != nil {
		fmt.Fprintf(os.Stderr, "kubeadm stand-in: writing %s: %v\n", env.VarLog, err)
		code = 1
	}
	os.Exit(code)
}

// failure is an error kubeadm would print as "error execution phase P: ...".
type failure struct {
	phase string
	err   error
}

func (f *failure) Error() string {
	if f.phase == "" {
		return f.err.Error()
	}
	return "error execution phase " + f.phase + ": " + f.err.Error()
}

func (f *failure) Unwrap() error { return f.err }

func inPhase(phase string, err error) error { return &failure{phase: phase, err: err} }

func run(args []string, e *env.Entry, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "kubeadm stand-in: want a subcommand: init, join, reset, version, config validate")
		return 1
	}
	e.Command = args[0]
	var err error
	switch args[0] {
	case "init":
		if len(args) > 2 && args[1] == "phase" && args[2] == "upload-certs" {
			err = runUploadCerts(args[3:], e, stdout)
			break
		}
		err = runInit(args[1:], e, stdout)
	case "join":
		err = runJoin(args[1:], e, stdout)
	case "reset":
		err = runReset(args[1:], stdout)
	case "version":
		err = runVersion(args[1:], stdout)
	case "config":
		err = runConfig(args[1:], stdout)
	default:
		err = fmt.Errorf("unknown command %q for \"kubeadm\"", args[0])
	}
	if err == nil {
		return 0
	}
	e.Error = err.Error()
	var pe *preflightError
	if errors.As(err, &pe) {
		fmt.Fprintln(stderr, pe.report())
	}
	// kubeadm's last words for any error, with exit status 1
	// (cmd/kubeadm/app/util/errors/errors.go, handleError, exitWithCode).
	fmt.Fprintln(stderr, "error: "+err.Error())
	fmt.Fprintln(stderr, "To see the stack trace of this error execute with --v=5 or higher")
	return 1
}
