package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/onekube/onekube/context/kubeconfig"
	"github.com/onekube/onekube/flow/access"
	"github.com/onekube/onekube/flow/register"
)

// kubeconfigFlags are the options of `onekube-flow kubeconfig`.
type kubeconfigFlags struct {
	conn       connFlags
	merge      bool
	path       string
	renew      bool
	role       string
	ttl        time.Duration
	timeout    time.Duration
	identity   string
	as         string
	noVerify   bool
	storeKey   bool
	pollPeriod time.Duration
}

func (a *app) kubeconfigCmd() *cobra.Command {
	f := kubeconfigFlags{}
	cmd := &cobra.Command{
		Use:   "kubeconfig SERVICE",
		Short: "Get a kubeconfig for a cluster: a short-lived certificate only you can read",
		Long: `Ask a master of the cluster's OneFlow service (ID or name) for a kubeconfig and
print it, or merge it into $KUBECONFIG (its first file) or ~/.kube/config with
--merge (other clusters and contexts kept, written atomically, mode 0600).

The credential is a client certificate for you alone, signed by the cluster CA,
valid --ttl (default 24h, at most 7 days), with the role cluster-admin or view
(default: the most your entry allows). The master first sends a challenge
sealed to your key and signs only once this command has answered it, then
seals the credential with age to your key, so neither the other VMs of the
service nor other OpenNebula users can read it, or have one made in your name,
on its way through OpenNebula. Your key is ~/.config/onekube/age-key.txt, made
on first use (or --identity: an age identity file or an unencrypted SSH key).

A master answers only keys its CONTEXT authorizes (ONEKUBE_KUBECONFIG_USERS,
entries name:key[:maxrole], filled at instantiate from your OpenNebula user's
ONEKUBE_AGE_RECIPIENT, as cluster-admin, which this command and create store
for you, and from the input ONEKUBE_KUBECONFIG_RECIPIENTS, view unless an
entry says cluster-admin). See docs/kubeconfig.md to authorize others and to
revoke.

The kubeconfig points at ONEAPP_K8S_CONTROL_PLANE_EP when set, else at the
master's own address. Before writing anything it checks, against that API
server, that the certificate is yours (--no-verify skips this).

Endpoints and credentials are found as for create. Exit codes: 0 done, 2
usage error, 3 the cluster is not ready yet (no master VM yet, or none
RUNNING with READY=YES: run again later), 1 any other failure, which
running again would not mend: oned or OneFlow refusing your credentials
or the call, a redirect, an answer that is not theirs, the master refusing,
and --timeout passing (the command waited as long as told; to wait longer,
raise --timeout rather than retry).`,
		Example: `  onekube-flow kubeconfig kubernetes --merge && kubectl get nodes
  onekube-flow kubeconfig 12 --role view --ttl 2h > view.kubeconfig
  onekube-flow kubeconfig kubernetes --merge --renew`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("kubeconfig takes one argument, the service ID or name; got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return a.runKubeconfig(cmd.Context(), f, args[0]) },
	}
	fs := cmd.Flags()
	f.conn.registerEndpoints(fs)
	fs.BoolVar(&f.merge, "merge", false, "merge into the kubeconfig file and make it the current context, instead of printing")
	fs.StringVar(&f.path, "kubeconfig", "", "the file --merge writes (default: first of $KUBECONFIG, else ~/.kube/config); implies --merge")
	fs.BoolVar(&f.renew, "renew", false, "get a fresh certificate even if the file holds one valid for a while")
	fs.StringVar(&f.role, "role", "", "cluster-admin or view (default: the most your authorized entry allows)")
	fs.DurationVar(&f.ttl, "ttl", kubeconfig.DefaultTTL, "certificate validity, 1m to 168h")
	fs.DurationVar(&f.timeout, "timeout", 2*time.Minute, "how long to wait for oned and the master's answer; when it passes the command fails (exit 1)")
	fs.StringVar(&f.identity, "identity", "", "your key: an age identity file or an unencrypted SSH private key (default ~/.config/onekube/age-key.txt, created on first use)")
	fs.StringVar(&f.identity, "key", "", "same as --identity")
	fs.StringVar(&f.as, "as", "", "the authorized name to use when your key is listed under several")
	fs.BoolVar(&f.noVerify, "no-verify", false, "do not check the certificate against the API server before writing it")
	fs.BoolVar(&f.storeKey, "store-key", true, "store your public key in your OpenNebula user (ONEKUBE_AGE_RECIPIENT) when it has none")
	fs.DurationVar(&f.pollPeriod, "poll", time.Second, "pause between reads of the master while waiting")
	_ = fs.MarkHidden("poll")
	return cmd
}

func (a *app) runKubeconfig(ctx context.Context, f kubeconfigFlags, service string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if f.role != "" {
		if err := kubeconfig.CheckRole(f.role); err != nil {
			return usagef("--role: %v", err)
		}
	}
	if err := kubeconfig.CheckTTL(f.ttl); err != nil || f.ttl%time.Second != 0 {
		return usagef("--ttl %s: want whole seconds from %s to %s", f.ttl, kubeconfig.MinTTL, kubeconfig.MaxTTL)
	}
	if f.timeout <= 0 {
		return usagef("--timeout %s: want a positive duration", f.timeout)
	}
	merge := f.merge || f.path != ""
	conf, hc, err := f.conn.load(a)
	if err != nil {
		return err
	}
	id, err := a.identity(ctx, f, conf, hc)
	if err != nil {
		return err
	}
	c := &access.Client{
		Flow:           &register.FlowClient{BaseURL: conf.OneFlow, User: conf.FlowUser, Password: conf.FlowPassword, HTTP: hc},
		VMs:            register.NewOnedVMs(conf.XMLRPC, conf.User, conf.Password, hc),
		RequestTimeout: f.conn.timeout,
		Sleep:          a.sleep,
		Poll:           f.pollPeriod,
		Progress:       func(s string) { fmt.Fprintln(a.stderr, s) },
	}
	want := access.Want{Service: service, Identity: id, As: f.as, Role: f.role, TTL: f.ttl}
	wctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	t, err := c.Locate(wctx, want)
	if err != nil {
		return kubeconfigExit(wctx, f.timeout, err)
	}
	cluster := clusterName(t.ServiceName, t.ServiceID)
	role := t.Role
	entry := access.Entry{Cluster: cluster, Name: contextName(t.User, role, cluster), Server: t.Server}
	path := ""
	if merge {
		if path, err = a.kubeconfigPath(f.path); err != nil {
			return err
		}
		// Refuse a file that cannot be merged into (a named pipe, a
		// device) before a credential is made for nothing.
		old, err := access.ReadKubeconfig(path)
		if err != nil {
			return fmt.Errorf("--merge: %w; nothing was asked of the master", err)
		}
		if !f.renew && a.stillValid(old, path, entry, t.User, role, f.ttl) {
			return nil
		}
	}
	res, err := c.Fetch(wctx, t, want)
	if err != nil {
		return kubeconfigExit(wctx, f.timeout, err)
	}
	entry.CAPEM, entry.CertPEM, entry.KeyPEM = res.Payload.CAPEM, res.Payload.CertPEM, res.Payload.Key
	if !f.noVerify {
		if err := verifyLive(ctx, entry, t.User, role); err != nil {
			return err
		}
	}
	until := res.Cert.NotAfter.Local().Format(time.RFC3339)
	if !merge {
		b, err := access.Render(entry)
		if err != nil {
			return err
		}
		if _, err := a.stdout.Write(b); err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "kubeconfig for %s (%s) on %s, valid until %s\n", t.User, role, t.Server, until)
		return nil
	}
	var placed access.Merged
	err = access.UpdateFile(path, func(old []byte) (out []byte, err error) {
		out, placed, err = access.MergeReport(old, entry)
		return out, err
	})
	if err != nil {
		return fmt.Errorf("merging into %s: %w", path, err)
	}
	renamed := "another context uses the %s entry %q, which is left as it is; this one is %q\n"
	if placed.Cluster != entry.Cluster {
		fmt.Fprintf(a.stderr, renamed, "cluster", entry.Cluster, placed.Cluster)
	}
	if placed.User != entry.Name {
		fmt.Fprintf(a.stderr, renamed, "user", entry.Name, placed.User)
	}
	fmt.Fprintf(a.stderr, "merged context %q into %s and made it current: %s as %s on %s, valid until %s\n",
		entry.Name, path, t.User, role, t.Server, until)
	return nil
}

// kubeconfigExit sets the exit code of a failure to locate or fetch.
// 3 ("not ready yet, run again later") is access.ErrNotReady alone: the
// service has no master VM yet, or none is RUNNING with READY=YES, as
// status says "in progress". Everything else is 1, since running again
// would fail the same way: oned or OneFlow refusing the credentials or
// the call, a refused redirect, an answer that is not theirs, the master
// refusing, and the --timeout deadline, whether oned or the master was
// too slow: the command already waited as long as it was told to, and a
// script that wants to wait longer passes a longer --timeout.
func kubeconfigExit(ctx context.Context, timeout time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		if !errors.Is(err, access.ErrNoAnswer) { // that one says how long it waited
			err = fmt.Errorf("gave up after --timeout %s: %w", timeout, err)
		}
		return err
	}
	if errors.Is(err, access.ErrNotReady) {
		return exitError{code: exitInProgress, err: err}
	}
	return err
}

// verifyLive asks the API server who the new credential is.
func verifyLive(ctx context.Context, e access.Entry, user, role string) error {
	vctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	name, groups, err := access.Whoami(vctx, e.Server, e.CAPEM, e.CertPEM, []byte(e.KeyPEM.Reveal()))
	if err != nil {
		if errors.Is(err, access.ErrUnreachable) {
			return fmt.Errorf("%w; nothing was written (--no-verify writes the kubeconfig unchecked)", err)
		}
		return fmt.Errorf("checking the kubeconfig: %w; nothing was written", err)
	}
	if name != user || !slices.Contains(groups, kubeconfig.Group(user, role)) {
		return fmt.Errorf("checking the kubeconfig: %w: the API server at %s says the certificate is %q in %v, not %s; nothing was written",
			access.ErrNotThisCluster, e.Server, name, groups, user)
	}
	return nil
}

// stillValid reports (and says) that b, read from path, already holds a
// credential for this cluster, user and role with a good part of its life
// left.
func (a *app) stillValid(b []byte, path string, e access.Entry, user, role string, ttl time.Duration) bool {
	ex, ok := access.Lookup(b, e.Cluster, e.Name)
	if !ok || ex.Server != e.Server || ex.Cert.Subject.CommonName != user ||
		!slices.Equal(ex.Cert.Subject.Organization, []string{kubeconfig.Group(user, role)}) {
		return false
	}
	left := time.Until(ex.Cert.NotAfter)
	if left < min(time.Hour, ttl/2) {
		return false
	}
	fmt.Fprintf(a.stderr, "%s already holds %q, valid until %s; --renew gets a fresh one\n",
		path, e.Name, ex.Cert.NotAfter.Local().Format(time.RFC3339))
	return true
}

// kubeconfigPath is where --merge writes: the flag, else the first file of
// $KUBECONFIG (kubectl writes new entries there too), else ~/.kube/config.
func (a *app) kubeconfigPath(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	for _, p := range filepath.SplitList(a.env.Getenv("KUBECONFIG")) {
		if p != "" {
			return p, nil
		}
	}
	if a.env.Home == "" {
		return "", errors.New("no home directory for ~/.kube/config: pass --kubeconfig")
	}
	return filepath.Join(a.env.Home, ".kube", "config"), nil
}

// clusterName names the cluster entry after the service, with its ID
// (names repeat, IDs do not within one OpenNebula).
func clusterName(name string, id int) string {
	clean := strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == '/' {
			return '-'
		}
		return r
	}, printable(name, 60))
	if clean == "" {
		clean = "onekube"
	}
	return clean + "-" + strconv.Itoa(id)
}

// contextName is user@cluster, with the role for anything but
// cluster-admin, so a view and an admin credential live side by side.
func contextName(user, role, cluster string) string {
	if role == kubeconfig.RoleClusterAdmin {
		return user + "@" + cluster
	}
	return user + "-" + role + "@" + cluster
}
