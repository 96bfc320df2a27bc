package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"

	"github.com/onekube/onekube/agent/kversion"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/agent/upgrade"
	"github.com/onekube/onekube/flow/register"
	"github.com/onekube/onekube/flow/status"
)

type upgradeFlags struct {
	to, bundleSHA, kubeconfig, kubeContext string
	bundle, batch                          int
}

func (a *app) upgradeCmd() *cobra.Command {
	var conn connFlags
	f := upgradeFlags{bundle: -1}
	cmd := &cobra.Command{
		Use:   "upgrade SERVICE --to vX.Y.Z --bundle IMAGE_ID",
		Short: "Upgrade a running cluster in place to a patch or the next minor, from a bundle image",
		Long: `Plan an in-place upgrade (docs/upgrades.md). The bundle is an OpenNebula image
built by the appliance's make target (filesystem label ONEKUBE-BUNDLE); its
manifest's sha256 is read from the image's ONEKUBE_BUNDLE_SHA256 attribute, or
given with --bundle-sha256.

Preflight, each refusal naming its reason: the service and every VM RUNNING
(oned's word), the target a patch or the next minor of every Node (no
downgrade, no skipped minor), the bundle image READY or USED and its
ONEKUBE_BUNDLE_VERSION attribute the target (required), etcd ready
(/readyz/etcd). Then the plan is written, with your admin kubeconfig, into
the ConfigMap kube-system/onekube-upgrade, which only cluster-admin can write
and the nodes can only read. The acting master's onekubed runs it: control
planes one at a time, then workers --batch at a time, each drained with its
PodDisruptionBudgets honoured. The command returns once the acting master
has taken the plan up (at most 2 minutes: serve looks every minute while
idle), so that the status that follows shows the rollout. Follow it with:
onekube-flow status SERVICE --wait 60m.

A rollout that stopped (a refusal, a failed node, a drain held too long)
leaves the cluster serving; running the same command again continues it.`,
		Example: `  onekube-flow upgrade kubernetes --to v1.37.2 --bundle 118
  onekube-flow upgrade 12 --to v1.37.2 --bundle 118 --bundle-sha256 "$(sha256sum onekube-bundle.json | cut -d' ' -f1)"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("upgrade takes one argument, the service ID or name; got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			target, err := kversion.ParseVersion(f.to)
			if err != nil {
				return usagef("--to: %v", err)
			}
			if f.bundle < 0 {
				return usagef("--bundle IMAGE_ID is required: the bundle image built by the appliance's make target")
			}
			if f.bundleSHA != "" && !sha256Flag.MatchString(f.bundleSHA) {
				return usagef("--bundle-sha256: want 64 lowercase hex digits")
			}
			if f.batch < 1 {
				return usagef("--batch %d: want at least 1", f.batch)
			}
			conf, hc, err := conn.load(a)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
			defer cancel()
			fetch := &status.Fetcher{
				Flow:    &register.FlowClient{BaseURL: conf.OneFlow, User: conf.FlowUser, Password: conf.FlowPassword, HTTP: hc},
				VMs:     register.NewOnedVMs(conf.XMLRPC, conf.User, conf.Password, hc),
				Timeout: conn.timeout, Deadline: status.DefaultDeadline,
			}
			id, err := fetch.Resolve(ctx, args[0])
			if err != nil {
				return err
			}
			report, err := fetch.Fetch(ctx, id)
			if err != nil {
				return err
			}
			kpath, err := a.kubeconfigPath(f.kubeconfig)
			if err != nil {
				return err
			}
			cs, err := kubeClient(kpath, f.kubeContext, clusterName(report.ServiceName, id))
			if err != nil {
				return err
			}
			images := register.NewOnedImages(conf.XMLRPC, conf.User, conf.Password, hc)
			d := upgradeDeps{
				Report: report,
				Image: func(ctx context.Context, id int) (register.ImageFacts, error) {
					return images.Facts(ctx, id, upgrade.BundleSHA256Attr, bundleVersionAttr)
				},
				Kube:      cs,
				EtcdReady: func(ctx context.Context) error { return readyz(ctx, cs, "/readyz/etcd") },
			}
			msg, err := runUpgrade(ctx, d, target, f)
			if err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, msg)
			// Return once serve has taken the plan up, so that the status
			// --wait that follows sees the rollout, not a ready service.
			pctx, pcancel := context.WithTimeout(cmd.Context(), pickupWait)
			defer pcancel()
			sleep := a.sleep
			if sleep == nil {
				sleep = system.RealClock{}.Sleep
			}
			if !awaitPickup(pctx, func(ctx context.Context) (status.Report, error) { return fetch.Fetch(ctx, id) }, target, 2*time.Second, sleep) {
				fmt.Fprintf(a.stderr, "onekube-flow: no acting master took the plan up within %s (is onekubed serve running on a master?); until one does, status shows no upgrade\n", pickupWait)
			}
			fmt.Fprintf(a.stderr, "onekube-flow: follow it with: onekube-flow status %d --wait 60m\n", id)
			return nil
		},
	}
	fs := cmd.Flags()
	conn.register(fs)
	fs.StringVar(&f.to, "to", "", "target Kubernetes version, vMAJOR.MINOR.PATCH (a patch or the next minor)")
	fs.IntVar(&f.bundle, "bundle", -1, "ID of the bundle image (OpenNebula image, label ONEKUBE-BUNDLE)")
	fs.StringVar(&f.bundleSHA, "bundle-sha256", "", "sha256 of the bundle's onekube-bundle.json (default: the image's "+upgrade.BundleSHA256Attr+")")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "admin kubeconfig (default $KUBECONFIG, else ~/.kube/config), as onekube-flow kubeconfig --merge writes it")
	fs.StringVar(&f.kubeContext, "context", "", "kubeconfig context (default: the one whose cluster is this service's, as onekube-flow kubeconfig names it)")
	fs.IntVar(&f.batch, "batch", 1, "workers upgraded at once (at most half of them)")
	return cmd
}

// bundleVersionAttr is the image attribute the make target sets with the
// bundle's version (appliance/bundle.sh). It must name the target: the
// nodes check the manifest too, but only after the first master is
// drained, so a wrong or unknown bundle would stop the rollout there.
const bundleVersionAttr = "ONEKUBE_BUNDLE_VERSION"

// bundleUsable refuses an image oned would not attach: only READY and
// USED (attached elsewhere, fine for a non-persistent image) are; LOCKED
// is still being copied, DISABLED, ERROR and the rest fail the attach on
// every node (oned's ImageManager::acquire_image, src/image/ImageManagerActions.cc).
func bundleUsable(id int, img register.ImageFacts) error {
	switch img.State {
	case "READY", "USED":
		return nil
	}
	return &upgrade.Refusal{Code: "bundle-state", Detail: fmt.Sprintf("image %d (%s) is %s: the VMs can attach only a READY or USED image (oneimage show %d)", id, img.Name, orNone(img.State), id)}
}

// bundleVersion refuses unless the image's version attribute names
// target. Without it the version cannot be established before a node
// mounts the bundle.
func bundleVersion(target kversion.Version, id int, img register.ImageFacts) error {
	v := img.Attrs[bundleVersionAttr]
	if v == "" {
		return &upgrade.Refusal{Code: "not-in-bundle", Detail: fmt.Sprintf("image %d (%s) has no %s attribute, so its release is unknown: if it is the bundle of %s, set it (oneimage update %d --append, %s = \"%s\")",
			id, img.Name, bundleVersionAttr, target, id, bundleVersionAttr, target)}
	}
	bv, err := kversion.ParseVersion(v)
	if err != nil {
		return &upgrade.Refusal{Code: "not-in-bundle", Detail: fmt.Sprintf("image %d (%s): %s: %v", id, img.Name, bundleVersionAttr, err)}
	}
	return upgrade.CheckBundle(target, bv)
}

func orNone(s string) string {
	if s == "" {
		return "in no known state"
	}
	return s
}

var sha256Flag = regexp.MustCompile(`^[0-9a-f]{64}$`)

// upgradeDeps is what runUpgrade reads and writes, behind seams.
type upgradeDeps struct {
	Report    status.Report
	Image     func(ctx context.Context, id int) (register.ImageFacts, error)
	Kube      kubernetes.Interface
	EtcdReady func(ctx context.Context) error
}

// runUpgrade is the preflight and the plan write; it returns the line to
// print.
func runUpgrade(ctx context.Context, d upgradeDeps, target kversion.Version, f upgradeFlags) (string, error) {
	if err := statesRefusal(d.Report); err != nil {
		return "", err
	}
	img, err := d.Image(ctx, f.bundle)
	if err != nil {
		return "", err
	}
	if img.Persistent {
		return "", &upgrade.Refusal{Code: "not-in-bundle", Detail: fmt.Sprintf("image %d is persistent: every VM attaches the bundle at once, so it must not be (oneimage nonpersistent %d)", f.bundle, f.bundle)}
	}
	if err := bundleUsable(f.bundle, img); err != nil {
		return "", err
	}
	sum := f.bundleSHA
	if sum == "" {
		sum = img.Attrs[upgrade.BundleSHA256Attr]
		if !sha256Flag.MatchString(sum) {
			return "", fmt.Errorf("image %d (%s) has no valid %s attribute: register the bundle with it, or pass --bundle-sha256", f.bundle, img.Name, upgrade.BundleSHA256Attr)
		}
	}
	nodes, err := d.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("listing nodes with the admin kubeconfig: %w", err)
	}
	var versions []upgrade.NodeVersion
	upToDate := 0
	for _, n := range nodes.Items {
		v, err := kversion.ParseKubeletVersion(n.Status.NodeInfo.KubeletVersion)
		if err != nil {
			return "", fmt.Errorf("node %s: %w", n.Name, err)
		}
		versions = append(versions, upgrade.NodeVersion{Name: n.Name, Version: v})
		if v == target {
			upToDate++
		}
	}
	if err := upgrade.CheckVersions(target, versions); err != nil {
		return "", err
	}
	if err := bundleVersion(target, f.bundle, img); err != nil {
		return "", err
	}
	if err := d.EtcdReady(ctx); err != nil {
		return "", &upgrade.Refusal{Code: "etcd", Detail: err.Error()}
	}
	plan := upgrade.Plan{Target: target, BundleImage: f.bundle, BundleSHA: sum}
	data, kept, err := writePlan(ctx, d.Kube.CoreV1().ConfigMaps(upgrade.PlanNamespace), plan, f.batch)
	if err != nil {
		return "", err
	}
	verb := "planned"
	if kept > 0 {
		verb = fmt.Sprintf("continues where it is, %d node(s) already let go", kept)
	}
	return fmt.Sprintf("upgrade to %s %s (bundle image %d, attempt %s): %d of %d nodes already at %s",
		target, verb, f.bundle, data[upgrade.KeyAttempt], upToDate, len(versions), target), nil
}

// writePlan creates the plan ConfigMap or merges plan into it
// (upgrade.NextPlanData), and returns the data written and how many of
// serve's grants were kept (a rollout under way that goes on). serve
// writes the same ConfigMap at each grant and cordon, so a run of the
// command mid-rollout can lose the race on its resourceVersion: it reads
// again and merges again rather than fail.
func writePlan(ctx context.Context, cms typedcorev1.ConfigMapInterface, plan upgrade.Plan, batch int) (map[string]string, int, error) {
	var data map[string]string
	kept := 0
	raced := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }
	err := retry.OnError(retry.DefaultRetry, raced, func() error {
		cm, err := cms.Get(ctx, upgrade.PlanName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			data, _ = upgrade.NextPlanData(nil, plan, batch)
			kept = 0
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: upgrade.PlanName, Namespace: upgrade.PlanNamespace,
				Labels: map[string]string{"app.kubernetes.io/managed-by": "onekube"}}, Data: data}
			if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("writing the upgrade plan: %w", err)
			}
			return nil
		case err != nil:
			return fmt.Errorf("reading the upgrade plan: %w", err)
		}
		if data, err = upgrade.NextPlanData(cm.Data, plan, batch); err != nil {
			return err
		}
		kept = 0
		if cm.Data[upgrade.KeyPhase] != upgrade.PhaseDone && cm.Data[upgrade.KeyTarget] == plan.Target.String() {
			kept = len(upgrade.Grants(data))
		}
		cm.Data = data
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("writing the upgrade plan: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return data, kept, nil
}

// statesRefusal refuses unless oned says the service and every VM of it
// RUNNING (the same rule serve applies before each node).
func statesRefusal(r status.Report) error {
	if r.ServiceState != "RUNNING" {
		return &upgrade.Refusal{Code: "service-state", Detail: fmt.Sprintf("service %d is %s, not RUNNING", r.ServiceID, r.ServiceState)}
	}
	if len(r.VMs) == 0 {
		return &upgrade.Refusal{Code: "vm-state", Detail: "the service has no VMs"}
	}
	for _, v := range r.VMs {
		switch {
		case v.ReadError != "":
			return &upgrade.Refusal{Code: "vm-state", Detail: fmt.Sprintf("VM %d could not be read: %s", v.ID, v.ReadError)}
		case v.State != "ACTIVE" || v.LCMState != "RUNNING":
			return &upgrade.Refusal{Code: "vm-state", Detail: fmt.Sprintf("VM %d (%s) is %s/%s, not RUNNING", v.ID, v.Role, v.State, v.LCMState)}
		}
	}
	return nil
}

// kubeClient loads the admin kubeconfig. Without --context it takes the
// one context whose cluster is this service's (onekube-flow kubeconfig
// names it so), so a kubeconfig's current context cannot point an upgrade
// at another cluster.
func kubeClient(path, kubeContext, cluster string) (kubernetes.Interface, error) {
	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	if kubeContext == "" {
		var found []string
		for name, c := range raw.Contexts {
			if c.Cluster == cluster {
				found = append(found, name)
			}
		}
		if len(found) != 1 {
			return nil, fmt.Errorf("%s has %d contexts for cluster %s: pass --context (onekube-flow kubeconfig SERVICE --merge writes one)", path, len(found), cluster)
		}
		kubeContext = found[0]
	}
	rc, err := clientcmd.NewNonInteractiveClientConfig(*raw, kubeContext, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig context %q: %w", kubeContext, err)
	}
	rc.Timeout = 30 * time.Second
	return kubernetes.NewForConfig(rc)
}

// readyz asks the API server for one of its readiness checks.
func readyz(ctx context.Context, cs kubernetes.Interface, path string) error {
	body, err := cs.Discovery().RESTClient().Get().AbsPath(path).DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("GET %s: %w: %s", path, err, strconv.Quote(string(body)))
	}
	return nil
}
