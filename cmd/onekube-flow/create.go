package main

import (
	"context"
	"fmt"

	"github.com/onekube/onekube/flow/register"
	"github.com/spf13/cobra"
)

func (a *app) createCmd() *cobra.Command {
	var sf specFlags
	var oneflow string
	var conn connFlags
	var opts register.Options
	var noKey bool
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Register the VM templates and the service template in OpenNebula",
		Long: `Register the VM group that keeps masters (when there are more than one) and,
with --worker-anti-affinity, workers on different hosts; the master and worker
VM templates (oned XML-RPC) unless the spec or flags give their IDs; then the
service template (OneFlow REST). Print one line per object: kind, role, ID,
what was done and the name. If a write fails, what this run created is
deleted again.

Endpoints and credentials are found as the OpenNebula CLIs find them: flags,
then ONE_XMLRPC, ONEFLOW_URL (or ~/.one/oneflow_endpoint), ONEFLOW_USER and
ONEFLOW_PASSWORD, ONE_AUTH (or ~/.one/one_auth, "user:password").

Templates are looked up by name among the caller's own (another user's
namesake is never touched): an existing one is refused unless --replace
(update it in place) or, for VM templates, --reuse-vm-templates. Nothing is
written when anything is refused.

It also makes your kubeconfig key (~/.config/onekube/age-key.txt) if you have
none and stores its public half in your OpenNebula user template
(ONEKUBE_AGE_RECIPIENT), so the clusters you instantiate authorize it and
'onekube-flow kubeconfig' works at once (--no-kubeconfig-key: neither).`,
		Example: `  onekube-flow create
  onekube-flow create -f cluster.yaml --replace
  onekube-flow create --oneflow 6 --master-template-id 11 --worker-template-id 12`,
		Args: rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := parseVersion(oneflow, false)
			if err != nil {
				return err
			}
			opts.Version = v
			s, err := sf.spec(cmd, a)
			if err != nil {
				return err
			}
			conf, hc, err := conn.load(a)
			if err != nil {
				return err
			}
			warnSpec(a.stderr, s)
			r := register.Registrar{
				VM:       register.NewOnedTemplates(conf.XMLRPC, conf.User, conf.Password, hc),
				Groups:   register.NewOnedVMGroups(conf.XMLRPC, conf.User, conf.Password, hc),
				Flow:     &register.FlowClient{BaseURL: conf.OneFlow, User: conf.FlowUser, Password: conf.FlowPassword, HTTP: hc},
				FlowUser: conf.FlowUser,
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 4*conn.timeout)
			defer cancel()
			out, err := r.Create(ctx, s, opts)
			for _, o := range out {
				fmt.Fprintln(a.stdout, o)
			}
			if err != nil {
				return err
			}
			a.kubeconfigKey(ctx, noKey, conf, hc)
			svc := out[len(out)-1]
			fmt.Fprintf(a.stderr, "next: onekube-flow render instantiate --network-id N > k8s.json && oneflow-template instantiate %d k8s.json\n", svc.ID)
			return nil
		},
	}
	sf.register(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVar(&oneflow, "oneflow", "7", "OneFlow data model: 7 (7.0-7.4) or 6 (6.8/6.10)")
	conn.register(fs)
	fs.BoolVar(&opts.Replace, "replace", false, "update existing templates of the same name in place")
	fs.BoolVar(&opts.ReuseVMTemplates, "reuse-vm-templates", false, "use existing VM templates of the same name as they are")
	fs.BoolVar(&noKey, "no-kubeconfig-key", false, "do not make your kubeconfig key nor store its public half in your OpenNebula user")
	return cmd
}
