// Command onekube-sim runs the OneGate + OneFlow simulator on loopback: it
// instantiates a service template and serves OneGate until interrupted, so
// onekube-agent processes can be pointed at the context files it writes.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/onekube/onekube/cmd/internal/version"
)

// Exit codes: 2 for usage errors, 1 for a failed run.
const (
	exitFailure = 1
	exitUsage   = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stderr))
}

type usageError struct{ error }

func run(ctx context.Context, args []string, stderr io.Writer) int {
	err := dispatch(ctx, args, stderr)
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "onekube-sim:", err)
		return exitUsage
	default:
		fmt.Fprintln(stderr, "onekube-sim:", err)
		return exitFailure
	}
}

func dispatch(ctx context.Context, args []string, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{errors.New("usage: onekube-sim serve --template FILE [flags] | onekube-sim version")}
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stderr)
	case "version":
		fmt.Fprintln(stderr, version.String())
		return nil
	}
	return usageError{fmt.Errorf("unknown command %q (want serve or version)", args[0])}
}
