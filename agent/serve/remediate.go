package serve

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// Remediate is the in-cluster MachineHealthCheck (LeaderOnly, issue 22).
// Each tick it reads the service once (GET /service?extended: roles,
// each VM's STATE and LCM_STATE) and the Nodes, judges every VM
// (remediate_health.go), and climbs one rung of the ladder for each
// unhealthy one (remediate_ladder.go), unless a guard stops it: the
// owner's switch or pause (remediate_pause.go), a short-circuit, etcd
// quorum (remediate_guard.go). Every rung taken is logged, recorded as an
// Event on the Node, kept in the status file and summed up in
// ONEGATE_K8S_REMEDIATION on this master for `onekube-flow status`.
//
// Nothing any VM can write decides anything here: a VM's role comes from
// roles[].nodes, its state from oned, its Node from spec.providerID. A
// sibling that rewrites USER_TEMPLATE keys (its own or another's) can
// neither make a healthy VM look broken nor pause the loop.
type Remediate struct {
	OneGate gate.OneGate
	Actor   VMActor
	Client  kubernetes.Interface
	// Members removes a master's etcd member before its VM goes; nil
	// refuses to replace masters.
	Members MemberRemover
	Clock   system.Clock
	Log     *slog.Logger
	// Self is this master's VM, never remediated by itself.
	Self       int
	MasterRole string
	// Off, when set, is why the owner's input switched remediation off
	// (ONEAPP_K8S_REMEDIATION): the loop judges and reports, and acts on
	// nothing.
	Off    string
	Config RemediateConfig
	// Drain empties a Node (drainNode when nil).
	Drain Drainer

	ladders map[int]*ladder
	clocks  waitClocks
	mirror  keyMirror
	actions []RemediateAction
	report  RemediateReport
}

var (
	_ Loop     = (*Remediate)(nil)
	_ Reporter = (*Remediate)(nil)
)

// maxActions is how many past actions the status keeps.
const maxActions = 20

// Name implements Loop.
func (r *Remediate) Name() string { return "remediate" }

// Report implements Reporter.
func (r *Remediate) Report() any { return r.report }

// Tick implements Loop.
func (r *Remediate) Tick(ctx context.Context) (time.Duration, error) {
	r.defaults()
	cfg := r.Config
	now := r.Clock.Now()
	svc, err := r.OneGate.GetServiceExtended(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading the service: %w", err)
	}
	nodes, claimed, err := providerNodes(ctx, r.Client)
	if err != nil {
		return 0, err
	}
	members, err := r.members(ctx, svc, nodes, claimed, now)
	if err != nil {
		return 0, err
	}
	rep := RemediateReport{State: "on", Unhealthy: map[string]string{}, InFlight: map[string]string{}, Blocked: map[string]string{}}
	stop := r.guards(ctx, &rep)

	verdicts := map[int]health{}
	var masters, workers, sickMasters, sickWorkers int
	// suspect counts, per group, the unhealthy and the Nodes NotReady
	// not yet for UnhealthyAfter, for the short-circuit only: a partition
	// turns its Nodes NotReady over a few seconds (each at its lease's
	// expiry), and the first past the timeout must not be remediated
	// alone while the rest follow.
	suspect := map[bool]int{}
	for _, m := range members {
		h := judge(m, now, cfg)
		verdicts[m.VMID] = h
		if h.unhealthy() {
			rep.Unhealthy[strconv.Itoa(m.VMID)] = h.Reason
		}
		if h.unhealthy() || (m.Node != nil && !nodeReady(*m.Node)) {
			suspect[m.Master]++
		}
		switch {
		case m.Master && h.unhealthy():
			masters, sickMasters = masters+1, sickMasters+1
		case m.Master:
			masters++
		case h.unhealthy():
			workers, sickWorkers = workers+1, sickWorkers+1
		default:
			workers++
		}
	}
	stopped := map[bool]string{}
	if sickMasters > 0 {
		stopped[true] = shortCircuit(true, masters, suspect[true], cfg)
	}
	if sickWorkers > 0 {
		stopped[false] = shortCircuit(false, workers, suspect[false], cfg)
	}
	for _, s := range []string{stopped[true], stopped[false]} {
		if s != "" {
			rep.Stopped = append(rep.Stopped, s)
		}
	}

	byID := map[int]member{}
	for _, m := range members {
		byID[m.VMID] = m
	}
	// The VMs to look at: the unhealthy, and those with a ladder (a
	// replaced VM's ladder outlives it until its role is whole again).
	var ids []int
	for _, m := range members {
		if verdicts[m.VMID].unhealthy() || r.ladders[m.VMID] != nil {
			ids = append(ids, m.VMID)
		}
	}
	for id := range r.ladders {
		if _, ok := byID[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	g := pass{r: r, svc: svc, byID: byID, verdicts: verdicts, stopped: stopped, stop: stop,
		masters: masters, sickMasters: sickMasters, rep: &rep, now: now}
	for _, id := range ids {
		g.one(ctx, id)
	}

	rep.Actions = append([]RemediateAction(nil), r.actions...)
	if len(rep.Unhealthy) == 0 {
		rep.Unhealthy = nil
	}
	if len(rep.InFlight) == 0 {
		rep.InFlight = nil
	}
	if len(rep.Blocked) == 0 {
		rep.Blocked = nil
	}
	r.report = rep
	if err := r.mirror.set(ctx, r.OneGate, remediationLine(rep)); err != nil {
		return 0, err
	}
	r.clocks.keep(noNodeIDs(members))
	return cfg.Every, nil
}

// guards reads the owner's switch and the pause: why nothing is done, "".
func (r *Remediate) guards(ctx context.Context, rep *RemediateReport) string {
	if r.Off != "" {
		rep.State = "off: " + r.Off
		return rep.State
	}
	why, err := pausedBy(ctx, r.Client)
	if err != nil {
		// A pause that cannot be read may be set: act on nothing.
		why = "the pause switch cannot be read (" + err.Error() + ")"
	}
	if why != "" {
		rep.State = "paused: " + why
		return rep.State
	}
	return ""
}

// members reads every VM of the service with its Node.
func (r *Remediate) members(ctx context.Context, svc *onegate.Service, nodes map[int]corev1.Node, claimed map[int]bool, now time.Time) ([]member, error) {
	var out []member
	for _, role := range svc.Roles {
		for _, n := range role.Nodes {
			vm := n.VM
			if vm == nil { // a OneGate that answered the short form
				var err error
				if vm, err = r.OneGate.GetVMByID(ctx, n.VMID); err != nil {
					return nil, fmt.Errorf("reading VM %d: %w", n.VMID, err)
				}
			}
			m := member{VMID: n.VMID, Role: role.Name, Master: role.Name == r.MasterRole, State: vm.State, LCM: vm.LCMState, Claimed: claimed[n.VMID]}
			if node, ok := nodes[n.VMID]; ok {
				m.Node = &node
			} else if !m.Claimed {
				m.NoNodeSince = r.clocks.observe(n.VMID, runStarted(vm), now)
			}
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].VMID < out[j].VMID })
	return out, nil
}

func noNodeIDs(ms []member) map[int]bool {
	ids := map[int]bool{}
	for _, m := range ms {
		if m.Node == nil && !m.Claimed {
			ids[m.VMID] = true
		}
	}
	return ids
}

// providerNodes lists the Nodes once: the Node of each VM by a provider
// ID that agrees with its name only (nodeVM), and every VM some Node may
// stand for, which may only withhold the no-Node verdict.
func providerNodes(ctx context.Context, cs kubernetes.Interface) (map[int]corev1.Node, map[int]bool, error) {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("listing nodes: %w", err)
	}
	byVM, claimed := map[int]corev1.Node{}, map[int]bool{}
	for _, n := range list.Items {
		b := nodeVM(n)
		if b.ByProvider {
			byVM[b.VM] = n
		}
		for _, id := range b.Claims {
			claimed[id] = true
		}
	}
	return byVM, claimed, nil
}

func (r *Remediate) defaults() {
	if r.Clock == nil {
		r.Clock = system.RealClock{}
	}
	if r.Log == nil {
		r.Log = slog.New(slog.DiscardHandler)
	}
	if r.Drain == nil {
		r.Drain = drainNode
	}
	if r.Actor == nil && r.Off == "" {
		r.Off = "no OneGate VM actions here"
	}
	if r.ladders == nil {
		r.ladders = map[int]*ladder{}
	}
	r.Config = r.Config.withDefaults()
	r.mirror.key = vmcontext.KeyPubRemediation
}

// remediationLine is ONEGATE_K8S_REMEDIATION: one bounded line, "" while
// there is nothing to say.
func remediationLine(rep RemediateReport) string {
	var parts []string
	if rep.State != "on" {
		parts = append(parts, rep.State)
	}
	parts = append(parts, rep.Stopped...)
	for _, id := range sortedVMKeys(rep.Unhealthy) {
		p := "VM " + id + " " + rep.Unhealthy[id]
		if s, ok := rep.InFlight[id]; ok {
			p += " (" + s + ")"
		}
		if s, ok := rep.Blocked[id]; ok {
			p += " (blocked: " + s + ")"
		}
		parts = append(parts, p)
	}
	for _, id := range sortedVMKeys(rep.InFlight) {
		if _, ok := rep.Unhealthy[id]; !ok {
			parts = append(parts, "VM "+id+" "+rep.InFlight[id])
		}
	}
	for _, id := range sortedVMKeys(rep.Blocked) {
		if _, ok := rep.Unhealthy[id]; !ok {
			parts = append(parts, "VM "+id+" blocked: "+rep.Blocked[id])
		}
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.NewReplacer(`"`, "'", "[", "(", "]", ")", `\`, "/", "\n", " ", "\r", " ", ",", ";").Replace(strings.Join(parts, " | "))
	return bounded(s, 480)
}

func sortedVMKeys(m map[string]string) []string {
	ids := make([]int, 0, len(m))
	for k := range m {
		if id, err := strconv.Atoi(k); err == nil {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.Itoa(id)
	}
	return out
}
