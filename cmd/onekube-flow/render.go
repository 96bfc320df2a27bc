package main

import (
	"fmt"
	"strings"

	"github.com/onekube/onekube/flow"
	"github.com/spf13/cobra"
)

func (a *app) renderCmd() *cobra.Command {
	var sf specFlags
	var oneflow string
	cmd := &cobra.Command{
		Use:   "render",
		Short: "Print the OneFlow service template (JSON) for a cluster",
		Long: `Print the OneFlow service template for a cluster spec, or for the built-in
defaults (1 master, 2 workers, flannel) when no spec is given. Flags override
the spec. Roles without a VM template ID get -1: register the VM templates
(render vm-template, or use create) and pass --master-template-id and
--worker-template-id.`,
		Example: `  onekube-flow render | oneflow-template create
  onekube-flow render --oneflow 6 --master-template-id 11 --worker-template-id 12
  onekube-flow render -f cluster.yaml --workers 5 --cni calico`,
		Args: rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, v, err := sf.versioned(cmd, a, oneflow)
			if err != nil {
				return err
			}
			doc, err := flow.RenderService(s, v)
			if err != nil {
				return err
			}
			warnSpec(a.stderr, s)
			a.hints(s)
			_, err = a.stdout.Write(doc)
			return err
		},
	}
	sf.register(cmd.Flags())
	cmd.Flags().StringVar(&oneflow, "oneflow", "7", "OneFlow data model: 7 (7.0-7.4) or 6 (6.8/6.10)")
	cmd.AddCommand(a.renderVMTemplateCmd(), a.renderVMGroupCmd(), a.renderInstantiateCmd(), a.renderSpecCmd())
	return cmd
}

// hints tells, on stderr, what the user still has to supply.
func (a *app) hints(s flow.Spec) {
	for _, role := range []string{flow.RoleMaster, flow.RoleWorker} {
		if r, _ := s.Role(role); r.TemplateID == nil {
			fmt.Fprintf(a.stderr, "hint: role %s has no VM template ID (rendered %d): pass --%s-template-id, or let 'onekube-flow create' register %q\n",
				role, flow.UnsetTemplateID, role, s.TemplateName(role))
		}
	}
	if roles := s.SpreadRoles(); len(roles) > 0 {
		fmt.Fprintf(a.stderr, "hint: roles %s join VM group %q (host anti-affinity): the user who instantiates must own it; 'onekube-flow create' registers it, or 'onekube-flow render vm-group > group.tmpl && onevmgroup create group.tmpl'\n",
			strings.Join(roles, ", "), s.VMGroupName())
	}
	if s.Network.ID == nil {
		fmt.Fprintf(a.stderr, "hint: network %s has no default (--network-id): instantiate must send networks_values, e.g. 'onekube-flow render instantiate --network-id N'\n", s.Network.Name)
	}
}

func (a *app) renderVMTemplateCmd() *cobra.Command {
	var sf specFlags
	var role string
	cmd := &cobra.Command{
		Use:   "vm-template --role master|worker",
		Short: "Print a role's OpenNebula VM template",
		Long: `Print the VM template of the master or worker role in OpenNebula template
syntax: sizes, disk, NIC, CONTEXT (every input passed as "$NAME", the OneGate
token, never REPORT_READY: the agent reports READY once Kubernetes is up),
USER_INPUTS and INPUTS_ORDER.`,
		Example: `  onekube-flow render vm-template --role master | onetemplate create
  onekube-flow render vm-template --role worker --worker-memory 8192 --worker-image-id 14`,
		Args: rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if role != flow.RoleMaster && role != flow.RoleWorker {
				return usagef("--role %q: want master or worker", role)
			}
			s, err := sf.spec(cmd, a)
			if err != nil {
				return err
			}
			text, err := flow.RenderVMTemplate(s, role)
			if err != nil {
				return err
			}
			warnSpec(a.stderr, s)
			_, err = fmt.Fprint(a.stdout, text)
			return err
		},
	}
	sf.register(cmd.Flags())
	cmd.Flags().StringVar(&role, "role", "", "master or worker")
	_ = cmd.RegisterFlagCompletionFunc("role", cobra.FixedCompletions([]string{flow.RoleMaster, flow.RoleWorker}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (a *app) renderVMGroupCmd() *cobra.Command {
	var sf specFlags
	cmd := &cobra.Command{
		Use:   "vm-group",
		Short: "Print the VM group that keeps a role's VMs on different hosts",
		Long: `Print the VM group (onevmgroup template) the rendered roles join: one role
POLICY = "ANTI_AFFINED" per spreading role (masters when there are more than
one, workers with --worker-anti-affinity). Prints nothing when no role
spreads. The user who instantiates the service must own it.`,
		Example: `  onekube-flow render vm-group --masters 3 > group.tmpl && onevmgroup create group.tmpl`,
		Args:    rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := sf.spec(cmd, a)
			if err != nil {
				return err
			}
			text, err := flow.RenderVMGroup(s)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(a.stdout, text)
			return err
		},
	}
	sf.register(cmd.Flags())
	return cmd
}

func (a *app) renderInstantiateCmd() *cobra.Command {
	var sf specFlags
	var oneflow string
	cmd := &cobra.Command{
		Use:   "instantiate --network-id N",
		Short: "Print the file for 'oneflow-template instantiate' with every input's value",
		Long: `Print the merge file 'oneflow-template instantiate ID FILE' sends: the value
of every user input (OneFlow 7 wants them all, optional ones too), the
network and the role counts.`,
		Example: `  onekube-flow render instantiate --network-id 0 --workers 3 > k8s.json
  oneflow-template instantiate kubernetes k8s.json`,
		Args: rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, v, err := sf.versioned(cmd, a, oneflow)
			if err != nil {
				return err
			}
			doc, err := flow.RenderInstantiate(s, v)
			if err != nil {
				return err
			}
			_, err = a.stdout.Write(doc)
			return err
		},
	}
	sf.register(cmd.Flags())
	cmd.Flags().StringVar(&oneflow, "oneflow", "7", "OneFlow data model: 7 or 6")
	return cmd
}

func (a *app) renderSpecCmd() *cobra.Command {
	var sf specFlags
	cmd := &cobra.Command{
		Use:     "spec",
		Short:   "Print the effective cluster spec (YAML), a starting point for a spec file",
		Example: `  onekube-flow render spec --masters 3 > cluster.yaml`,
		Args:    rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := sf.spec(cmd, a)
			if err != nil {
				return err
			}
			b, err := flow.MarshalSpec(s)
			if err != nil {
				return err
			}
			_, err = a.stdout.Write(b)
			return err
		},
	}
	sf.register(cmd.Flags())
	return cmd
}

// versioned builds the spec from the file and flags and parses --oneflow:
// what every command that renders a service document needs first.
func (sf *specFlags) versioned(cmd *cobra.Command, a *app, oneflow string) (flow.Spec, flow.OneFlowVersion, error) {
	v, err := parseVersion(oneflow, false)
	if err != nil {
		return flow.Spec{}, 0, err
	}
	s, err := sf.spec(cmd, a)
	return s, v, err
}
