package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/onekube/onekube/flow/register"
	"github.com/onekube/onekube/flow/status"
	"github.com/spf13/cobra"
)

// exitInProgress: status found nothing failed, but not everything ready.
const exitInProgress = 3

func (a *app) statusCmd() *cobra.Command {
	var conn connFlags
	var asJSON bool
	var wait, deadline time.Duration
	cmd := &cobra.Command{
		Use:   "status SERVICE",
		Short: "Show how far each VM of a cluster's OneFlow service has got",
		Long: `Read a OneFlow service (by ID, or by a name that must be unique) and every VM
of it from oned, and print one row per VM, by role then VM ID: its state, the
phase onekube-agent published (ONEGATE_K8S_PHASE), READY, the Kubernetes node
name, the first NIC's IP and the agent's error. The join token is never shown;
--json says only whether a master published one ("token_published").

--json prints a document of version 1: {version, service{id,name,state},
outcome, reasons[], roles[]{name,state,cardinality,vms}, vms[]{role,id,name,
state,lcm_state,ip,phase,ready,node,error,master,token_published,read_error},
not_read (when the deadline passed)}.

While an in-place upgrade runs (docs/upgrades.md) the table adds the acting
master's rollout line and each node's step, and each VM in the JSON has
upgrade, upgrade_error, upgrade_rollout and upgrade_rollout_error; an upgrade
in progress counts as in progress, a stopped one as failed.

Every value a VM published is shown masked (anything shaped like a join
token or its 16-character secret half, in any case, becomes <redacted>) and
cut to 4 KiB, ending "…[cut]" when it was longer; table cells are shorter.

--deadline bounds one read of the service and all its VMs (default 2m; each
request also has --timeout). When it passes, the VMs not read yet are rows
saying "not read: the deadline passed", stderr says how many, and the exit
code follows the rows as usual: 3, or 1 if a failure was already seen.

--wait polls every 5s (jittered) until the cluster is ready or something
failed, or the duration passes, and prints the last view. Each poll is one
read bounded by --deadline; --wait bounds the whole.

Endpoints and credentials are found as for create.

Exit codes: 0 the service is RUNNING and every VM has READY=YES; 1 something
failed (a VM's agent phase "failed", a VM in FAILURE, DONE or a *_FAILURE
LCM state, a FAILED_* service or role, a service undeploying or done, a
master that cannot renew its certificates or whose certificates expire within
7 days or have expired) or the
service could not be read (also when --deadline passed before it was); 2
usage error; 3 in progress (nothing failed, not everything ready yet, a VM
could not be read, or --deadline or --wait passed first).`,
		Example: `  onekube-flow status 12
  onekube-flow status kubernetes --wait 20m
  onekube-flow status kubernetes --json | jq '.vms[] | select(.ready | not)'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("status takes one argument, the service ID or name; got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if wait < 0 {
				return usagef("--wait %s: want a positive duration, or 0 not to wait", wait)
			}
			if deadline <= 0 {
				return usagef("--deadline %s: want a positive duration", deadline)
			}
			conf, hc, err := conn.load(a)
			if err != nil {
				return err
			}
			f := &status.Fetcher{
				Flow:     &register.FlowClient{BaseURL: conf.OneFlow, User: conf.FlowUser, Password: conf.FlowPassword, HTTP: hc},
				VMs:      register.NewOnedVMs(conf.XMLRPC, conf.User, conf.Password, hc),
				Timeout:  conn.timeout,
				Deadline: deadline,
			}
			// The whole command is bounded: by --wait when waiting, else by
			// --deadline, the name lookup included.
			whole := deadline
			if wait > 0 {
				whole = wait
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), whole)
			defer cancel()
			id, err := f.Resolve(ctx, args[0])
			if err != nil {
				return err
			}
			var r status.Report
			if wait == 0 {
				r, err = f.Fetch(ctx, id)
			} else {
				r, err = f.Wait(ctx, id, status.Poll{Sleep: a.sleep, Progress: progress(a.stderr)})
			}
			if err != nil {
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return fmt.Errorf("%w (the %s bound passed: raise --deadline or --wait)", err, whole)
				}
				return err
			}
			write := status.WriteTable
			if asJSON {
				write = status.WriteJSON
			}
			if err := write(a.stdout, r); err != nil {
				return err
			}
			if r.NotRead > 0 {
				fmt.Fprintf(a.stderr, "onekube-flow: the deadline (%s) passed before %d of %d VMs were read; raise --deadline to read them all\n",
					min(deadline, whole), r.NotRead, len(r.VMs))
			}
			switch r.Outcome {
			case status.Ready:
				return nil
			case status.Failed:
				return exitCode{exitFailed}
			}
			if wait > 0 {
				fmt.Fprintf(a.stderr, "onekube-flow: not ready after %s\n", wait)
			}
			return exitCode{exitInProgress}
		},
	}
	fs := cmd.Flags()
	conn.register(fs)
	fs.BoolVar(&asJSON, "json", false, "print the documented JSON document instead of a table")
	fs.DurationVar(&wait, "wait", 0, "poll until ready or failed, at most this long (e.g. 20m)")
	fs.DurationVar(&deadline, "deadline", status.DefaultDeadline, "bound of one read of the service and all its VMs (each --wait poll)")
	return cmd
}

// progress prints one line per poll while waiting, to stderr so stdout
// holds only the final view.
func progress(w io.Writer) func(status.Report, error) {
	return func(r status.Report, err error) {
		if err != nil {
			fmt.Fprintf(w, "waiting: re-reading the service failed, retrying: %v\n", err)
			return
		}
		line := fmt.Sprintf("waiting: service %s, %d of %d VMs ready", r.ServiceState, r.ReadyVMs(), len(r.VMs))
		if r.NotRead > 0 {
			line += fmt.Sprintf(" (%d not read before the deadline)", r.NotRead)
		}
		if len(r.Reasons) > 0 {
			line += "; " + strings.Join(r.Reasons, "; ")
		}
		fmt.Fprintln(w, truncateLine(line, 200))
	}
}

func truncateLine(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	return string(rs[:n-1]) + "…"
}
