package serve

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/autoscale"
	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// Autoscale sizes the worker role the way the cluster-autoscaler does
// (LeaderOnly; decisions in agent/autoscale). Scale-up: pods the scheduler
// left Unschedulable are placed, in a simulation with the scheduler's own
// filters, on the nodes there are, then on new workers made from the
// role's template; the role's cardinality is raised by as many workers as
// that took, never past Bounds.Max. Scale-down: a worker whose requests
// stayed under Threshold for UnneededTime, and whose pods all fit
// elsewhere, is drained with PodDisruptionBudgets honoured and its VM
// terminated through OneGate; OneFlow drops the VM at DONE and lowers the
// cardinality (day2 §3.3, Option B), and the cleanup loop deletes the Node.
//
// Its inputs are what no sibling VM can write: Bounds from this master's
// CONTEXT, the Kubernetes API, and from OneGate's service document only
// the service and role states, the cardinality and roles[].nodes (docs/
// trust.md). A Node is a VM only through spec.providerID one://<VMID>.
//
// OneFlow scales only a RUNNING service: in COOLDOWN, SCALING or WARNING
// it refuses (day2 §3.2, §4), and OneGate turns any refusal, max_vms
// included, into one generic 400 (context/onegatesim handlers.go
// scaleRole). The loop asks nothing then, and after a refusal asks again
// only once the service, the role or its nodes changed, or after
// DefaultRefusalRecheck (max_vms is invisible to a VM); the report says
// which refusal holds.
type Autoscale struct {
	OneGate gate.OneGate
	Scaler  RoleScaler
	// Actions terminates a VM; nil leaves scale-down off (a client
	// without VM actions, as some tests hand it).
	Actions VMActions
	Client  kubernetes.Interface
	Drainer NodeDrainer
	Clock   system.Clock
	Log     *slog.Logger

	Bounds autoscale.Bounds
	// Role is the worker role's name in the service.
	Role string
	// VMTemplate, when set, sizes a worker for a role with no Ready Node
	// to copy (scale from zero): the worker role's VCPU, MEMORY, labels
	// and taints, from KeyWorkerTemplate in this master's own CONTEXT.
	VMTemplate func() (autoscale.WorkerSize, bool)
	// Threshold: a worker whose requests are below this share of its
	// allocatable is under-used (the cluster-autoscaler's
	// --scale-down-utilization-threshold, 0.5).
	Threshold float64
	// UnneededTime: how long a worker must stay removable before it goes
	// (--scale-down-unneeded-time, 10 min).
	UnneededTime time.Duration
	// AllowOldest lets scale-down pick the role's oldest VM; by default
	// it never does.
	AllowOldest bool
	Every       time.Duration

	since   map[string]time.Time // node -> first seen removable, this term
	refused *refusal
	report  AutoscaleReport
	mirror  keyMirror // ONEGATE_K8S_AUTOSCALE on this master
}

// RoleScaler changes a role's cardinality (OneGate PUT /service/role/:role;
// onegate.Client.ScaleRole).
type RoleScaler interface {
	ScaleRole(ctx context.Context, role string, cardinality int) error
}

// VMActions performs an action on a VM of the service (OneGate
// POST /vms/:id/action).
type VMActions interface {
	Action(ctx context.Context, vmID int, perform string, params map[string]string) error
}

// NodeDrainer cordons a node and evicts its pods, PDBs honoured; Uncordon
// undoes the cordon after a drain or a termination that failed.
type NodeDrainer interface {
	// Drain cordons, then asks blocker about the node's pods as they are
	// once cordoned (one may have landed since the decision) and stops
	// when it names one.
	Drain(ctx context.Context, node string, blocker func([]corev1.Pod) string) error
	Uncordon(ctx context.Context, node string) error
}

// Defaults of the autoscale loop (the cluster-autoscaler's).
const (
	DefaultAutoscaleEvery        = 30 * time.Second
	DefaultAutoscaleThreshold    = 0.5
	DefaultAutoscaleUnneededTime = 10 * time.Minute
	// DefaultRefusalRecheck: a refused scale is asked again after this
	// long even in an unchanged service, since the owner may have raised
	// max_vms, which no VM can read.
	DefaultRefusalRecheck = 15 * time.Minute
)

// OneFlow Service::STATE values the report names (WARNING and the
// others onegate.states.go does not name).
var serviceStateNames = map[int]string{
	0: "PENDING", 1: "DEPLOYING", 2: "RUNNING", 3: "UNDEPLOYING", 4: "WARNING", 5: "DONE",
	6: "FAILED_UNDEPLOYING", 7: "FAILED_DEPLOYING", 8: "SCALING", 9: "FAILED_SCALING", 10: "COOLDOWN",
}

func stateName(s int) string {
	if n, ok := serviceStateNames[s]; ok {
		return n
	}
	return "state " + strconv.Itoa(s)
}

// refusal is a scale OneFlow refused, and the world it was refused in.
type refusal struct {
	world  string
	at     time.Time
	target int
	msg    string
}

// AutoscaleReport is the loop's part of the serve status.
type AutoscaleReport struct {
	Min         int `json:"min"`
	Max         int `json:"max"`
	Cardinality int `json:"cardinality"`
	// Refused names the refusal that holds: the service state OneFlow
	// refuses scaling in, or a refused request not retried until the
	// service changes.
	Refused       string            `json:"refused,omitempty"`
	Pending       int               `json:"pending_unschedulable"`
	NoTemplate    []string          `json:"fit_no_worker,omitempty"`
	OverMax       []string          `json:"over_max,omitempty"`
	LastScaleUp   string            `json:"last_scale_up,omitempty"`
	LastScaleDown string            `json:"last_scale_down,omitempty"`
	Unneeded      map[string]string `json:"unneeded_since,omitempty"`
	Note          string            `json:"note,omitempty"`
}

var (
	_ Loop       = (*Autoscale)(nil)
	_ Reporter   = (*Autoscale)(nil)
	_ TermScoped = (*Autoscale)(nil)
)

// Name implements Loop.
func (a *Autoscale) Name() string { return "autoscale" }

// Report implements Reporter.
func (a *Autoscale) Report() any { return a.report }

// NewTerm implements TermScoped: how long a node has been unneeded and
// what OneFlow refused are this term's observations.
func (a *Autoscale) NewTerm() {
	a.since, a.refused = nil, nil
}

// Tick implements Loop. After each decision the report is summed up in
// ONEGATE_K8S_AUTOSCALE on this master for `onekube-flow status`.
func (a *Autoscale) Tick(ctx context.Context) (time.Duration, error) {
	every, err := a.tick(ctx)
	a.mirror.key = vmcontext.KeyPubAutoscale
	if perr := a.mirror.set(ctx, a.OneGate, autoscaleLine(a.report)); perr != nil && err == nil {
		err = perr
	}
	return every, err
}

func (a *Autoscale) tick(ctx context.Context) (time.Duration, error) {
	if a.Clock == nil {
		a.Clock = system.RealClock{}
	}
	if a.Log == nil {
		a.Log = slog.New(slog.DiscardHandler)
	}
	every := cmp.Or(a.Every, DefaultAutoscaleEvery)
	a.report.Min, a.report.Max = a.Bounds.Min, a.Bounds.Max
	svc, err := a.OneGate.GetService(ctx)
	if err != nil {
		return every, fmt.Errorf("reading the service: %w", err)
	}
	role := svc.Role(a.Role)
	if role == nil {
		a.report.Note = "the service has no role " + a.Role
		return every, nil
	}
	a.report.Cardinality = role.Cardinality
	world := worldKey(svc, role)
	if a.refused != nil && (a.refused.world != world || a.Clock.Now().Sub(a.refused.at) >= DefaultRefusalRecheck) {
		a.refused = nil // the service changed, or max_vms may have: OneFlow may say yes now
	}
	if svc.State != onegate.ServiceRunning || (role.State != 0 && role.State != onegate.ServiceRunning) {
		a.refused = nil // a state change: what was refused may pass after it
		a.report.Refused = fmt.Sprintf("OneFlow refuses scaling while the service is %s (role %s): waiting for RUNNING", stateName(svc.State), stateName(role.State))
		return every, nil
	}
	a.report.Refused = ""
	if a.refused != nil {
		a.report.Refused = a.refused.msg
	}

	nodes, err := a.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return every, fmt.Errorf("listing nodes: %w", err)
	}
	pods, err := a.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return every, fmt.Errorf("listing pods: %w", err)
	}
	w := a.read(role, nodes.Items, pods.Items)
	scaled, err := a.scaleUp(ctx, role, w, world)
	if err != nil || scaled {
		a.since = nil // the cluster is changing; idle time starts again
		return every, err
	}
	return every, a.scaleDown(ctx, role, w)
}

// worldKey is what a refused scale is remembered against: the service
// and role states, the cardinality and the role's VMs.
func worldKey(svc *onegate.Service, role *onegate.Role) string {
	ids := make([]string, 0, len(role.Nodes))
	for _, n := range role.Nodes {
		ids = append(ids, strconv.Itoa(n.VMID))
	}
	slices.Sort(ids)
	return fmt.Sprintf("%d/%d/%d/%s", svc.State, role.State, role.Cardinality, strings.Join(ids, ","))
}

// cluster is one reading of the API server against the role.
type cluster struct {
	nodes   []*corev1.Node
	bound   []*corev1.Pod
	pending []*corev1.Pod
	// workers maps the role's Nodes to their VMs (spec.providerID only).
	workers map[string]int
	oldest  int // the role's oldest VM (lowest ID: oned numbers VMs in order)
}

func (a *Autoscale) read(role *onegate.Role, nodes []corev1.Node, pods []corev1.Pod) cluster {
	c := cluster{workers: map[string]int{}, oldest: -1}
	inRole := map[int]bool{}
	for _, n := range role.Nodes {
		inRole[n.VMID] = true
		if c.oldest < 0 || n.VMID < c.oldest {
			c.oldest = n.VMID
		}
	}
	for i := range nodes {
		n := &nodes[i]
		c.nodes = append(c.nodes, n)
		if b := nodeVM(*n); b.ByProvider && inRole[b.VM] {
			c.workers[n.Name] = b.VM
		}
	}
	for i := range pods {
		p := &pods[i]
		switch {
		case autoscale.Unschedulable(p):
			c.pending = append(c.pending, p)
		case p.Spec.NodeName != "" && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed:
			c.bound = append(c.bound, p)
		}
	}
	// Oldest first, as the scheduler's queue roughly takes them.
	slices.SortStableFunc(c.pending, func(x, y *corev1.Pod) int {
		return cmp.Or(x.CreationTimestamp.Compare(y.CreationTimestamp.Time),
			cmp.Compare(x.Namespace+"/"+x.Name, y.Namespace+"/"+y.Name))
	})
	return c
}

// template is a new worker: the newest Ready worker Node, else the VM
// size of the role.
func (a *Autoscale) template(c cluster) (autoscale.Template, bool) {
	var best *corev1.Node
	for _, n := range c.nodes {
		id, ok := c.workers[n.Name]
		if !ok || !nodeReady(*n) {
			continue
		}
		if best == nil || id > c.workers[best.Name] {
			best = n
		}
	}
	if best != nil {
		return autoscale.TemplateFromNode(best), true
	}
	if a.VMTemplate != nil {
		if size, ok := a.VMTemplate(); ok {
			if t, err := size.Template(); err == nil {
				return t, true
			}
		}
	}
	return autoscale.Template{}, false
}

// scaleUp raises the cardinality when pending pods need new workers, or
// when it is below Bounds.Min.
func (a *Autoscale) scaleUp(ctx context.Context, role *onegate.Role, c cluster, world string) (bool, error) {
	a.report.Pending = len(c.pending)
	a.report.NoTemplate, a.report.OverMax = nil, nil
	target := role.Cardinality
	why := ""
	if target < a.Bounds.Min {
		target, why = a.Bounds.Min, fmt.Sprintf("below the minimum %d", a.Bounds.Min)
	}
	if len(c.pending) > 0 {
		tmpl, ok := a.template(c)
		if !ok {
			a.report.Note = "no worker Node to copy and no VM size: pending pods cannot be judged"
		} else {
			a.report.Note = ""
			plan, err := a.plan(role, c, tmpl)
			if err != nil {
				return false, err
			}
			a.report.NoTemplate, a.report.OverMax = plan.NoTemplate, plan.OverMax
			if plan.New > 0 && role.Cardinality+plan.New > target {
				target = role.Cardinality + plan.New
				why = fmt.Sprintf("%d unschedulable pods fit %d new workers (%s)", len(plan.Helped), plan.New, strings.Join(head(plan.Helped, 3), ", "))
			}
		}
	}
	target = min(target, a.Bounds.Max)
	if target <= role.Cardinality {
		return false, nil
	}
	if a.refused != nil && target <= a.refused.target {
		return false, nil // refused in this same world: not asked again
	}
	if err := a.Scaler.ScaleRole(ctx, a.Role, target); err != nil {
		if onegate.IsBadRequest(err) {
			// OneFlow said no to a RUNNING service: the role's max_vms
			// (a VM cannot read it) or a state change since the read.
			a.refused = &refusal{world: world, at: a.Clock.Now(), target: target, msg: fmt.Sprintf(
				"OneFlow refused cardinality %d for role %s (likely the role's max_vms; OneGate does not say): not asked again until the service changes", target, a.Role)}
			a.report.Refused = a.refused.msg
			a.Log.Warn("scale-up refused by OneFlow", "role", a.Role, "cardinality", target, "error", err)
			return false, nil
		}
		return false, fmt.Errorf("scaling role %s to %d: %w", a.Role, target, err)
	}
	a.report.LastScaleUp = fmt.Sprintf("%s: %s %d -> %d: %s", a.Clock.Now().UTC().Format(time.RFC3339), a.Role, role.Cardinality, target, why)
	a.Log.Info("scaled up", "role", a.Role, "from", role.Cardinality, "to", target, "why", why)
	return true, nil
}

// plan simulates the pending pods on the nodes there are, those still on
// their way (VMs of the role without a Node yet, counted as template
// workers as the cluster-autoscaler counts upcoming nodes), then on new
// ones.
func (a *Autoscale) plan(role *onegate.Role, c cluster, tmpl autoscale.Template) (autoscale.ScaleUp, error) {
	nodes := slices.Clone(c.nodes)
	for i := range max(0, role.Cardinality-len(c.workers)) {
		nodes = append(nodes, tmpl.Node(fmt.Sprintf("onekube-autoscale-upcoming-%d", i+1)))
	}
	sim, err := autoscale.NewSim(nodes, c.bound)
	if err != nil {
		return autoscale.ScaleUp{}, err
	}
	return autoscale.PlanScaleUp(sim, c.pending, tmpl, a.Bounds.Max-role.Cardinality), nil
}

func head(s []string, n int) []string { return s[:min(n, len(s))] }

// scaleDown removes at most one worker per tick.
func (a *Autoscale) scaleDown(ctx context.Context, role *onegate.Role, c cluster) error {
	now := a.Clock.Now()
	if a.Actions == nil || a.Drainer == nil {
		a.report.Unneeded = nil
		return nil
	}
	if role.Cardinality-1 < a.Bounds.Min || len(c.pending) > 0 || role.Cardinality != len(c.workers) {
		// At the minimum, pods waiting, or VMs still joining or leaving.
		a.since, a.report.Unneeded = nil, nil
		return nil
	}
	var cands []string
	for name, id := range c.workers {
		n := nodeByName(c.nodes, name)
		if (id == c.oldest && !a.AllowOldest) || n == nil || !nodeReady(*n) || n.Spec.Unschedulable {
			continue
		}
		cands = append(cands, name)
	}
	slices.Sort(cands)
	pdbs, err := a.Client.PolicyV1().PodDisruptionBudgets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing PodDisruptionBudgets: %w", err)
	}
	verdicts, err := autoscale.PlanScaleDown(autoscale.ScaleDownInput{Nodes: c.nodes, Pods: c.bound, PDBs: pdbs.Items,
		Candidates: cands, Threshold: cmp.Or(a.Threshold, DefaultAutoscaleThreshold)})
	if err != nil {
		return err
	}
	since := map[string]time.Time{}
	a.report.Unneeded = map[string]string{}
	pick, pickSince := "", time.Time{}
	for _, v := range verdicts {
		if !v.Removable {
			continue
		}
		t, ok := a.since[v.Node]
		if !ok {
			t = now
		}
		since[v.Node] = t
		a.report.Unneeded[v.Node] = t.UTC().Format(time.RFC3339)
		if now.Sub(t) >= cmp.Or(a.UnneededTime, DefaultAutoscaleUnneededTime) && (pick == "" || t.Before(pickSince)) {
			pick, pickSince = v.Node, t
		}
	}
	a.since = since
	if pick == "" {
		return nil
	}
	return a.remove(ctx, role, pick, c.workers[pick], pdbs.Items)
}

// remove drains the node and terminates exactly its VM. A failure
// uncordons it, so a node the autoscaler could not remove serves again.
func (a *Autoscale) remove(ctx context.Context, role *onegate.Role, node string, vmid int, pdbs []policyv1.PodDisruptionBudget) error {
	blocker := func(pods []corev1.Pod) string {
		for i := range pods {
			if b := autoscale.Blocker(&pods[i], pdbs); b != "" {
				return "pod " + pods[i].Namespace + "/" + pods[i].Name + " " + b
			}
		}
		return ""
	}
	a.Log.Info("removing an unneeded worker", "node", node, "vm", vmid)
	if err := a.Drainer.Drain(ctx, node, blocker); err != nil {
		a.undo(ctx, node)
		delete(a.since, node)
		return fmt.Errorf("draining node %s: %w", node, err)
	}
	if err := a.Actions.Action(ctx, vmid, "terminate", nil); err != nil {
		a.undo(ctx, node)
		delete(a.since, node)
		if onegate.IsBadRequest(err) {
			a.report.Refused = fmt.Sprintf("OneGate refused to terminate VM %d (node %s): %v", vmid, node, err)
			return nil
		}
		return fmt.Errorf("terminating VM %d (node %s): %w", vmid, node, err)
	}
	delete(a.since, node)
	delete(a.report.Unneeded, node)
	a.report.LastScaleDown = fmt.Sprintf("%s: node %s (VM %d) drained and terminated; %s %d -> %d when OneFlow drops it",
		a.Clock.Now().UTC().Format(time.RFC3339), node, vmid, a.Role, role.Cardinality, role.Cardinality-1)
	a.Log.Info("scaled down", "node", node, "vm", vmid)
	return nil
}

func (a *Autoscale) undo(ctx context.Context, node string) {
	if err := a.Drainer.Uncordon(ctx, node); err != nil {
		a.Log.Warn("uncordoning after a failed removal", "node", node, "error", err)
	}
}

func nodeByName(nodes []*corev1.Node, name string) *corev1.Node {
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}
