package upgrade

import (
	"fmt"
	"sort"
)

// NodeView is what the orchestrator sees of one Node.
type NodeView struct {
	NodeVersion
	Ready bool
	// Claim is the node's own step annotation (ParseStepClaim); Error its
	// error annotation. Both are the node's word about itself only.
	Claim    StepClaim
	HasClaim bool
	Error    string
}

// Rollout is the acting master's part of the plan ConfigMap.
type Rollout struct {
	Grants   map[string]Mode
	Cordoned map[string]bool
	Stopped  string
	Batch    int
}

// ActionKind is what the orchestrator does next.
type ActionKind string

const (
	ActDrain    ActionKind = "drain"    // cordon the node and drain it, PDBs honoured
	ActGrant    ActionKind = "grant"    // write grant.<node> = Mode
	ActUncordon ActionKind = "uncordon" // the node is done: let pods back
	ActStop     ActionKind = "stop"     // write stopped = Reason and go no further
	ActFinish   ActionKind = "finish"   // every node is at the target
)

// ActRelease: the node failed its step. Uncordon it if serve cordoned it
// (cordoned.<node>), so the stopped rollout leaves it serving, and
// withdraw its grant, so the owner's next run drains it again before it
// retries: a retry must never run kubeadm under pods let back.
const ActRelease ActionKind = "release"

// Action is one thing to do; the loop runs them in order and stops at the
// first that fails.
type Action struct {
	Kind   ActionKind
	Node   string
	Mode   Mode
	Reason string
	// ClearClaim (ActGrant): the node's own last claim is a failure from
	// an earlier attempt; the orchestrator erases it before the grant is
	// written, so it is not read as the new attempt's failure before the
	// node's executor has seen the grant (it polls every 30 s).
	ClearClaim bool
}

// Decide is the orchestrator's whole policy for one tick. health runs the
// state and etcd checks (nil when all is well); it is called only before
// a new node is let go, so its reads cost nothing while nodes work, and a
// node mid-step is never abandoned half-way by its own reboot.
func Decide(p Plan, r Rollout, nodes []NodeView, health func() error) []Action {
	if r.Stopped != "" {
		return nil // the owner's next `onekube-flow upgrade` clears it
	}
	var versions []NodeVersion
	for _, n := range nodes {
		versions = append(versions, n.NodeVersion)
	}
	if err := CheckVersions(p.Target, versions); err != nil {
		return []Action{{Kind: ActStop, Reason: err.Error()}}
	}
	sorted := append([]NodeView(nil), nodes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })

	// A failed node stops the rollout, leaving the cluster serving: every
	// failed node is released, and done nodes are uncordoned as usual.
	// A failed claim means the node's executor ended its attempt (it
	// records the failure after the step returned, and retries only on
	// the owner's next attempt), so no kubeadm runs there any more.
	// Uncordoning is sound at any failed step: kubeadm rolls its static
	// pods back on failure, and the kubelet is swapped only after kubeadm
	// succeeded and, on a worker, after every control plane, so it is
	// never newer than the API server; a kubelet left down keeps its
	// Node NotReady, which the scheduler avoids without the cordon.
	var acts, releases []Action
	var stop *Action
	for _, n := range sorted {
		if _, granted := r.Grants[n.Name]; granted && n.HasClaim && n.Claim.Version == p.Target && n.Claim.Step == StepFailed {
			releases = append(releases, Action{Kind: ActRelease, Node: n.Name})
			if stop == nil {
				stop = &Action{Kind: ActStop, Reason: refuse("node-failed", "node %s: %s", n.Name, orUnknown(n.Error)).Error()}
			}
			continue
		}
		if r.Cordoned[n.Name] && done(p, n) {
			acts = append(acts, Action{Kind: ActUncordon, Node: n.Name})
		}
	}
	if stop != nil {
		return append(append(acts, releases...), *stop)
	}
	healthy := func() error {
		if health == nil {
			return nil
		}
		return health()
	}
	letGo := func(n NodeView, m Mode) []Action {
		if err := healthy(); err != nil {
			return append(acts, Action{Kind: ActStop, Reason: err.Error()})
		}
		return append(acts, Action{Kind: ActDrain, Node: n.Name}, Action{Kind: ActGrant, Node: n.Name, Mode: m, ClearClaim: failedBefore(n)})
	}

	// Control planes, one at a time; the first one not yet at the target
	// runs `upgrade apply` unless another already has.
	anyCPStarted := false
	for _, n := range sorted {
		if n.ControlPlane && (done(p, n) || r.Grants[n.Name] != "") {
			anyCPStarted = true
		}
	}
	for _, n := range sorted {
		if !n.ControlPlane || done(p, n) {
			continue
		}
		if r.Grants[n.Name] != "" {
			return acts // wait for it
		}
		mode := ModeNode
		if !anyCPStarted {
			mode = ModeApply
		}
		return letGo(n, mode)
	}

	// Workers, in batches, once every control plane is done.
	var workers, inflight, waiting []NodeView
	for _, n := range sorted {
		if n.ControlPlane {
			continue
		}
		workers = append(workers, n)
		switch {
		case done(p, n):
		case r.Grants[n.Name] != "":
			inflight = append(inflight, n)
		default:
			waiting = append(waiting, n)
		}
	}
	if len(inflight) == 0 && len(waiting) == 0 {
		return append(acts, Action{Kind: ActFinish})
	}
	slots := BatchSize(len(workers), r.Batch) - len(inflight)
	for i := 0; i < slots && i < len(waiting); i++ {
		if i == 0 {
			if err := healthy(); err != nil {
				return append(acts, Action{Kind: ActStop, Reason: err.Error()})
			}
		}
		acts = append(acts, Action{Kind: ActDrain, Node: waiting[i].Name}, Action{Kind: ActGrant, Node: waiting[i].Name, Mode: ModeNode, ClearClaim: failedBefore(waiting[i])})
	}
	return acts
}

// done: the node says it finished this target, and its kubelet reports
// the target and is Ready.
func done(p Plan, n NodeView) bool {
	return n.HasClaim && n.Claim == StepClaim{p.Target, StepDone} && n.Version == p.Target && n.Ready
}

// failedBefore: a node about to be granted still claims a failure, from an
// attempt whose grant was withdrawn (ActRelease).
func failedBefore(n NodeView) bool {
	return n.HasClaim && n.Claim.Step == StepFailed
}

func orUnknown(s string) string {
	if s == "" {
		return "failed, no reason given"
	}
	return fmt.Sprintf("%.200s", s)
}
