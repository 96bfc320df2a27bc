package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/onekube/onekube/context/onegatesim"
)

type serveFlags struct {
	template, merge, dir, listen, oneflow, network string
	vmidBase                                       int
	defaults, untilRunning                         bool
	timeout, cooldown                              time.Duration
}

func parseServe(args []string, stderr io.Writer) (serveFlags, error) {
	var f serveFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.template, "template", "", "service template JSON (OneFlow 6.x or 7.x), required")
	fs.StringVar(&f.merge, "merge", "", "instantiate merge document JSON (user_inputs_values, roles[].cardinality...)")
	fs.BoolVar(&f.defaults, "defaults", false, "fill user inputs the merge document leaves out with their defaults")
	fs.StringVar(&f.dir, "dir", "", "directory for the VMs' context dirs (default: a temporary one, removed on exit)")
	fs.StringVar(&f.listen, "listen", "127.0.0.1:0", "OneGate listen address")
	fs.StringVar(&f.oneflow, "oneflow", "7", "simulated OpenNebula: 7 (7.4), 6 (6.10), 5 (5.10) or a release like 6.8")
	fs.StringVar(&f.network, "network", "192.0.2.0/24", "pool for the VMs' NIC addresses (never contacted)")
	fs.IntVar(&f.vmidBase, "vmid-base", 100, "first VM ID")
	fs.DurationVar(&f.cooldown, "cooldown", onegatesim.DefaultCooldown, "role cooldown after scaling when the template sets none (OneFlow's :default_cooldown:; 0: none)")
	fs.BoolVar(&f.untilRunning, "until-running", false, "exit 0 once every service is RUNNING")
	fs.DurationVar(&f.timeout, "timeout", 0, "give up after this long (exit 1); 0: no limit")
	if err := fs.Parse(args); err != nil {
		return f, usageError{err}
	}
	if f.template == "" {
		return f, usageError{errors.New("serve: --template is required")}
	}
	if fs.NArg() > 0 {
		return f, usageError{fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))}
	}
	if f.untilRunning && f.timeout <= 0 {
		return f, usageError{errors.New("serve: --until-running needs a --timeout")}
	}
	return f, nil
}

func releaseOf(s string) string {
	switch s {
	case "7":
		return "7.4"
	case "6":
		return "6.10"
	case "5":
		return "5.10"
	}
	return s
}

func serve(ctx context.Context, args []string, stderr io.Writer) error {
	f, err := parseServe(args, stderr)
	if err != nil {
		return err
	}
	// VM notices arrive on the simulator's goroutine.
	stderr = &lockedWriter{w: stderr}
	pool, err := netip.ParsePrefix(f.network)
	if err != nil {
		return usageError{fmt.Errorf("serve: --network: %w", err)}
	}
	tmpl, err := os.ReadFile(f.template)
	if err != nil {
		return fmt.Errorf("reading template: %w", err)
	}
	var merge []byte
	if f.merge != "" {
		if merge, err = os.ReadFile(f.merge); err != nil {
			return fmt.Errorf("reading merge document: %w", err)
		}
	}
	if f.defaults {
		if merge, err = withDefaults(tmpl, merge); err != nil {
			return err
		}
	}
	cooldown := f.cooldown
	if cooldown <= 0 {
		cooldown = -1 // Options: negative is none, zero the default
	}
	sim := onegatesim.New(onegatesim.Options{
		Dir: f.dir, Version: releaseOf(f.oneflow), VMIDBase: f.vmidBase, Network: pool,
		Listen: f.listen, Cooldown: cooldown,
	})
	defer func() {
		fmt.Fprintln(stderr, "timeline:")
		for _, e := range sim.Events() {
			fmt.Fprintln(stderr, " ", e)
		}
		if err := sim.Close(); err != nil {
			fmt.Fprintln(stderr, "onekube-sim:", err)
		}
	}()
	sim.OnVMCreated(func(v onegatesim.VMInfo) {
		fmt.Fprintf(stderr, "vm %d %s role=%s ip=%s context=%s\n", v.ID, v.Name, v.Role, v.IP, v.ContextFile)
	})
	url, err := sim.Start()
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "onegate endpoint %s (OpenNebula %s)\n", url, releaseOf(f.oneflow))
	id, err := sim.Instantiate(tmpl, merge)
	if err != nil {
		return fmt.Errorf("instantiating: %w", err)
	}
	fmt.Fprintf(stderr, "service %d instantiated\n", id)

	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	if f.untilRunning {
		if err := sim.WaitServiceRunning(ctx); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "service %d RUNNING\n", id)
		return nil
	}
	<-ctx.Done()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("timeout after %s", f.timeout)
	}
	return nil // interrupted
}

// withDefaults adds the template's input defaults for inputs the merge
// document does not set (user_inputs_values, or custom_attrs_values for 6.x).
func withDefaults(tmpl, merge []byte) ([]byte, error) {
	defs, err := onegatesim.InputDefaults(tmpl)
	if err != nil {
		return nil, err
	}
	doc := map[string]any{}
	if len(merge) > 0 {
		if err := json.Unmarshal(merge, &doc); err != nil {
			return nil, fmt.Errorf("decoding merge document: %w", err)
		}
	}
	key := "user_inputs_values"
	if strings.Contains(string(tmpl), `"custom_attrs"`) {
		key = "custom_attrs_values"
	}
	vals, _ := doc[key].(map[string]any)
	if vals == nil {
		vals = map[string]any{}
	}
	for k, v := range defs {
		if _, ok := vals[k]; !ok {
			vals[k] = v
		}
	}
	if len(vals) > 0 {
		doc[key] = vals
	}
	return json.Marshal(doc)
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
