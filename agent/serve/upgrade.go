package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/onekube/onekube/agent/etcdm"
	"github.com/onekube/onekube/agent/gate"
	"github.com/onekube/onekube/agent/kversion"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/agent/upgrade"
	vmcontext "github.com/onekube/onekube/context"
)

// Upgrade drives an in-place upgrade (LeaderOnly; docs/upgrades.md). The
// owner's intent is the plan ConfigMap only cluster-admin writes; this
// loop decides with upgrade.Decide, drains a node, then grants it its
// kubeadm step by writing grant.<node> into the same ConfigMap, and waits
// for the node's executor to claim "done" on its own Node with its kubelet
// at the target. Before letting any node go it checks, again, every
// refusal: the service and every VM RUNNING (vouched by oned), etcd fully
// healthy, the version rules. A refusal or failure stops the rollout
// (stopped=<reason>), with the cluster left serving; the owner's next
// `onekube-flow upgrade` clears it and the loop goes on where it was.
type Upgrade struct {
	Client  kubernetes.Interface
	OneGate gate.OneGate
	// Etcd lists etcd members with their health; nil (no stacked etcd
	// here) refuses every control-plane step.
	Etcd    MemberLister
	Drainer UpgradeDrainer
	Clock   system.Clock
	Log     *slog.Logger
	// Fast is the wait while a rollout runs, Idle while none does.
	Fast, Idle time.Duration

	rbacAt    time.Time
	published keyMirror
	errMirror keyMirror
}

// MemberLister lists etcd members with their health (*etcdm.Client).
type MemberLister interface {
	Members(ctx context.Context) ([]etcdm.Member, error)
}

// UpgradeDrainer cordons, drains and uncordons Nodes.
type UpgradeDrainer interface {
	// Drain cordons node and evicts its pods, PodDisruptionBudgets
	// honoured; it gives up after its deadline with the reason.
	Drain(ctx context.Context, node string) error
	Uncordon(ctx context.Context, node string) error
}

// Defaults of the upgrade loop.
const (
	DefaultUpgradeFast = 10 * time.Second
	DefaultUpgradeIdle = 60 * time.Second
)

var _ Loop = (*Upgrade)(nil)

// Name implements Loop.
func (u *Upgrade) Name() string { return "upgrade" }

// Tick implements Loop.
func (u *Upgrade) Tick(ctx context.Context) (time.Duration, error) {
	u.defaults()
	if u.rbacAt.IsZero() || u.Clock.Now().Sub(u.rbacAt) >= grantEvery {
		if err := EnsureUpgradePlanRBAC(ctx, u.Client); err != nil {
			return 0, err
		}
		u.rbacAt = u.Clock.Now()
	}
	cms := u.Client.CoreV1().ConfigMaps(upgrade.PlanNamespace)
	cm, err := cms.Get(ctx, upgrade.PlanName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return u.Idle, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the upgrade plan: %w", err)
	}
	data := maps.Clone(cm.Data)
	if data == nil {
		data = map[string]string{}
	}
	plan, err := upgrade.ParsePlan(data)
	if err != nil {
		return u.stop(ctx, cm, data, err.Error())
	}
	if data[upgrade.KeyPhase] == upgrade.PhaseDone || data[upgrade.KeyStopped] != "" {
		return u.Idle, u.publish(ctx, data)
	}
	// Shown before this tick's acts, as a drain may take its whole
	// deadline: an owner's rerun after a stop is visible at once (the CLI
	// waits for it; status stops saying stopped). Unchanged, it costs
	// nothing (keyMirror).
	if err := u.publish(ctx, data); err != nil {
		u.Log.Warn("publishing the upgrade's progress", "error", err)
	}
	nodes, err := u.nodes(ctx, plan)
	if err != nil {
		return 0, err
	}
	granted := false
	acts := upgrade.Decide(plan, rolloutOf(data), nodes, func() error { return u.health(ctx) })
	for _, a := range acts {
		if a.Kind == upgrade.ActDrain && granted {
			break // one drain per tick keeps a tick inside DefaultMaxTick; the next tick comes in Fast
		}
		if a.Kind == upgrade.ActGrant {
			granted = true
		}
		if a.Kind == upgrade.ActDrain {
			// The cordon mark is written before the drain starts: serve
			// killed mid-drain leaves the Node cordoned, and the next
			// term lifts that cordon even if it stops before draining
			// the node again.
			data[upgrade.KeyCordonPrefix+a.Node] = "true"
			if cm, err = u.save(ctx, cm, data); err != nil {
				return 0, err
			}
		}
		if err := u.act(ctx, a, data); err != nil {
			var stop stopRollout
			if errors.As(err, &stop) {
				return u.stop(ctx, cm, data, string(stop))
			}
			// A transient failure (an uncordon the API refused): the next
			// tick decides again from what the cluster then says.
			return 0, err
		}
	}
	if _, err := u.save(ctx, cm, data); err != nil {
		return 0, err
	}
	if err := u.publish(ctx, data); err != nil {
		u.Log.Warn("publishing the upgrade's progress", "error", err)
	}
	return u.Fast, nil
}

// save writes data into the plan when it changed, and returns the
// ConfigMap as stored (its resourceVersion for the next write).
func (u *Upgrade) save(ctx context.Context, cm *corev1.ConfigMap, data map[string]string) (*corev1.ConfigMap, error) {
	if maps.Equal(data, cm.Data) {
		return cm, nil
	}
	next := cm.DeepCopy()
	next.Data = maps.Clone(data)
	out, err := u.Client.CoreV1().ConfigMaps(upgrade.PlanNamespace).Update(ctx, next, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("writing the upgrade plan's status: %w", err)
	}
	return out, nil
}

func (u *Upgrade) defaults() {
	if u.Fast <= 0 {
		u.Fast = DefaultUpgradeFast
	}
	if u.Idle <= 0 {
		u.Idle = DefaultUpgradeIdle
	}
	if u.Log == nil {
		u.Log = slog.New(slog.DiscardHandler)
	}
	u.published.key, u.errMirror.key = vmcontext.KeyPubUpgrade, vmcontext.KeyPubUpgradeError
}

// act runs one decision; data is updated in place and written by Tick.
func (u *Upgrade) act(ctx context.Context, a upgrade.Action, data map[string]string) error {
	switch a.Kind {
	case upgrade.ActDrain:
		// Tick wrote the cordon mark into the plan already.
		data[upgrade.KeyCordonPrefix+a.Node] = "true"
		if err := u.Drainer.Drain(ctx, a.Node); err != nil {
			// Leave the node serving: it is not going to be upgraded now.
			if uerr := u.Drainer.Uncordon(ctx, a.Node); uerr == nil {
				delete(data, upgrade.KeyCordonPrefix+a.Node)
			}
			return stopRollout((&upgrade.Refusal{Code: "drain-blocked", Detail: fmt.Sprintf("draining node %s: %v", a.Node, err)}).Error())
		}
		u.Log.Info("drained for its upgrade", "node", a.Node)
	case upgrade.ActGrant:
		if a.ClearClaim {
			// Before the grant is written, so the node's executor cannot
			// have claimed anything for it yet.
			if err := u.clearClaim(ctx, a.Node); err != nil {
				return err
			}
		}
		data[upgrade.KeyGrantPrefix+a.Node] = string(a.Mode)
		u.Log.Info("upgrade granted", "node", a.Node, "mode", a.Mode)
	case upgrade.ActUncordon:
		if err := u.Drainer.Uncordon(ctx, a.Node); err != nil {
			return err
		}
		delete(data, upgrade.KeyCordonPrefix+a.Node)
	case upgrade.ActRelease:
		if data[upgrade.KeyCordonPrefix+a.Node] == "true" {
			if err := u.Drainer.Uncordon(ctx, a.Node); err != nil {
				// Transient: the next tick decides again (the stop waits).
				return fmt.Errorf("uncordoning failed node %s: %w", a.Node, err)
			}
			delete(data, upgrade.KeyCordonPrefix+a.Node)
		}
		delete(data, upgrade.KeyGrantPrefix+a.Node)
		u.Log.Warn("upgrade failed on a node; it serves again, and the owner's next run drains it before it retries", "node", a.Node)
	case upgrade.ActFinish:
		data[upgrade.KeyPhase] = upgrade.PhaseDone
		u.Log.Info("upgrade finished", "version", data[upgrade.KeyTarget])
	case upgrade.ActStop:
		return stopRollout(a.Reason)
	}
	return nil
}

// clearClaim erases a node's stale step claim and error (a failure of an
// attempt whose grant was withdrawn). A JSON merge patch: annotations
// others wrote are kept.
func (u *Upgrade) clearClaim(ctx context.Context, node string) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null,%q:null}}}`, upgrade.AnnotationStep, upgrade.AnnotationError)
	if _, err := u.Client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("clearing node %s's failed upgrade claim: %w", node, err)
	}
	return nil
}

// stopRollout is an act's verdict that the rollout stops, with the reason.
type stopRollout string

func (s stopRollout) Error() string { return string(s) }

// stop records reason in the plan (the owner's next run clears it) and
// publishes it; the error is returned so the runner logs it.
func (u *Upgrade) stop(ctx context.Context, cm *corev1.ConfigMap, data map[string]string, reason string) (time.Duration, error) {
	data[upgrade.KeyStopped] = reason
	cm.Data = data
	if _, err := u.Client.CoreV1().ConfigMaps(upgrade.PlanNamespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return 0, fmt.Errorf("upgrade stopped (%s), and recording it failed: %w", reason, err)
	}
	_ = u.publish(ctx, data)
	return u.Idle, fmt.Errorf("upgrade stopped: %s", reason)
}

// health is the refusals checked before a node is let go; nil when all
// hold.
func (u *Upgrade) health(ctx context.Context) error {
	svc, err := u.OneGate.GetService(ctx)
	if err != nil {
		return fmt.Errorf("reading the service from OneGate: %w", err)
	}
	var vms []upgrade.VMState
	for _, r := range svc.Roles {
		for _, n := range r.Nodes {
			vm, err := u.OneGate.GetVMByID(ctx, n.VMID)
			if err != nil {
				return fmt.Errorf("reading VM %d from OneGate: %w", n.VMID, err)
			}
			vms = append(vms, upgrade.VMState{ID: n.VMID, State: vm.State, LCMState: vm.LCMState})
		}
	}
	if err := upgrade.CheckStates(svc.State, vms); err != nil {
		return err
	}
	if u.Etcd == nil {
		return &upgrade.Refusal{Code: "etcd", Detail: "this master cannot reach etcd to check its health"}
	}
	ms, err := u.Etcd.Members(ctx)
	if err != nil {
		return &upgrade.Refusal{Code: "etcd", Detail: err.Error()}
	}
	healthy := 0
	for _, m := range ms {
		if m.Healthy {
			healthy++
		}
	}
	return upgrade.CheckEtcd(len(ms), healthy)
}

// nodes reads every Node as the orchestrator sees it. The step
// annotations are each node's own claim and are only ever read for that
// node.
func (u *Upgrade) nodes(ctx context.Context, plan upgrade.Plan) ([]upgrade.NodeView, error) {
	list, err := u.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	var out []upgrade.NodeView
	for _, n := range list.Items {
		ver, err := kversion.ParseKubeletVersion(n.Status.NodeInfo.KubeletVersion)
		if err != nil {
			return nil, fmt.Errorf("node %s: kubelet version: %w", n.Name, err)
		}
		_, cp := n.Labels[labelControlPlane]
		v := upgrade.NodeView{NodeVersion: upgrade.NodeVersion{Name: n.Name, ControlPlane: cp, Version: ver}, Ready: nodeReady(n)}
		v.Claim, v.HasClaim = upgrade.ParseStepClaim(n.Annotations[upgrade.AnnotationStep])
		v.Error = n.Annotations[upgrade.AnnotationError]
		out = append(out, v)
	}
	return out, nil
}

// rolloutOf reads the acting master's keys of the plan.
func rolloutOf(data map[string]string) upgrade.Rollout {
	r := upgrade.Rollout{Grants: upgrade.Grants(data), Cordoned: map[string]bool{}, Stopped: data[upgrade.KeyStopped], Batch: 1}
	for k, v := range data {
		if node, ok := strings.CutPrefix(k, upgrade.KeyCordonPrefix); ok && v == "true" {
			r.Cordoned[node] = true
		}
	}
	if b, err := fmt.Sscanf(data[upgrade.KeyBatch], "%d", &r.Batch); b != 1 || err != nil {
		r.Batch = 1
	}
	return r
}

// publish shows the rollout on this master's USER_TEMPLATE (display only).
func (u *Upgrade) publish(ctx context.Context, data map[string]string) error {
	line := data[upgrade.KeyTarget] + " " + data[upgrade.KeyPhase]
	if data[upgrade.KeyPhase] == "" {
		grants := len(upgrade.Grants(data))
		line = fmt.Sprintf("%s in progress: %d node(s) granted", data[upgrade.KeyTarget], grants)
	}
	if err := u.published.set(ctx, u.OneGate, oneGateText(line)); err != nil {
		return err
	}
	stopped := data[upgrade.KeyStopped]
	if stopped != "" {
		// A drain's error quotes pod names and carries commas, which
		// OneGate cannot store (onegate.CheckValue): seen in the bed, where
		// the stop was never published.
		stopped = oneGateText(stopped)
	}
	return u.errMirror.set(ctx, u.OneGate, stopped)
}
