package serve

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/onekube/onekube/context/onegate"
)

// pass is one tick's view, shared by the per-VM steps.
type pass struct {
	r        *Remediate
	svc      *onegate.Service
	byID     map[int]member
	verdicts map[int]health
	// stopped is each group's short-circuit, by "is the master group".
	stopped              map[bool]string
	stop                 string
	masters, sickMasters int
	rep                  *RemediateReport
	now                  time.Time
	// drained: a replacement drained a Node this pass. One per pass keeps
	// a tick within DrainTimeout, far below the runner's MaxTick.
	drained bool
}

// one climbs at most one rung for VM id.
func (p *pass) one(ctx context.Context, id int) {
	r, cfg, key := p.r, p.r.Config, strconv.Itoa(id)
	m, inService := p.byID[id]
	rec := r.ladders[id]
	master := m.Master
	if !inService && rec != nil {
		master = rec.Role == r.MasterRole
	}
	v := vmNow{health: p.verdicts[id], InService: inService, PoweredOff: m.State == onegate.StatePoweroff}
	d := climb(rec, v, p.now, cfg)
	switch d.Do {
	case stepNone:
		return
	case stepWait:
		p.rep.InFlight[key] = string(rec.Step) + ": " + d.Why
		return
	case stepClear:
		delete(r.ladders, id)
		p.record(ctx, RemediateAction{VM: id, Node: rec.Node, Role: rec.Role, Step: string(stepClear), Detail: d.Why}, nil)
		return
	}
	if why := blockedBy(gateIn{Do: d.Do, Rec: rec, Paused: p.stop, Stopped: p.stopped[master], Self: id == r.Self,
		Master: master, Masters: p.masters, SickMasters: p.sickMasters, OtherMaster: p.otherMaster(id),
		EtcdHelper: r.Members != nil}); why != "" {
		p.rep.Blocked[key] = string(d.Do) + " held: " + why
		return
	}
	if d.Do == stepReplace && m.Node != nil && p.drained {
		p.rep.InFlight[key] = "replace on the next pass (one drain per pass)"
		return
	}
	switch d.Do {
	case stepPowerOff, stepResume:
		p.power(ctx, id, m, rec, d)
	case stepReplace:
		p.replace(ctx, id, m, rec, d)
	case stepScale:
		p.scale(ctx, id, rec)
	}
}

// troubleLeft: a VM of the service is POWEROFF, UNKNOWN or failed now.
func (p *pass) troubleLeft() bool {
	for _, h := range p.verdicts {
		if h.Trouble != "" {
			return true
		}
	}
	return false
}

// otherMaster: a master other than id is on a rung short of the scale.
func (p *pass) otherMaster(id int) bool {
	for other, l := range p.r.ladders {
		if other != id && l.Role == p.r.MasterRole && l.Step != stepScale {
			return true
		}
	}
	return false
}

// power sends a poweroff or a resume.
func (p *pass) power(ctx context.Context, id int, m member, rec *ladder, d decision) {
	r := p.r
	act := RemediateAction{VM: id, Role: m.Role, Step: string(d.Do), Detail: d.Why}
	if m.Node != nil {
		act.Node = m.Node.Name
	} else if rec != nil {
		act.Node = rec.Node
	}
	var err error
	if d.Do == stepPowerOff {
		err = r.Actor.Action(ctx, id, actPowerOff, nil)
	} else {
		err = r.Actor.Action(ctx, id, actResume, nil)
	}
	if err != nil {
		act.Error = err.Error()
		p.rep.Blocked[strconv.Itoa(id)] = string(d.Do) + " failed: " + err.Error()
		p.record(ctx, act, m.Node)
		return
	}
	r.ladders[id] = &ladder{Step: d.Do, At: p.now, Role: m.Role, Node: act.Node}
	p.rep.InFlight[strconv.Itoa(id)] = string(d.Do) + " sent"
	p.record(ctx, act, m.Node)
}

// replace drains the Node, removes a master's etcd member, deletes the
// Node and terminates the VM; sent again while the VM stays. The
// cardinality to restore is the role's before the first terminate.
func (p *pass) replace(ctx context.Context, id int, m member, rec *ladder, d decision) {
	r, key := p.r, strconv.Itoa(id)
	act := RemediateAction{VM: id, Role: m.Role, Step: string(stepReplace), Detail: d.Why}
	if rec != nil {
		act.Node = rec.Node
	}
	if n := m.Node; n != nil {
		act.Node = n.Name
		p.drained = true
		if err := r.Drain(ctx, r.Client, n.Name, r.Config.DrainTimeout); err != nil {
			act.Detail += "; drained as far as possible: " + err.Error()
		} else {
			act.Detail += "; drained"
		}
		if m.Master {
			if err := r.Members.RemoveMember(ctx, n.Name); err != nil {
				act.Error = "etcd member not removed: " + err.Error()
				p.rep.Blocked[key] = "replace held: " + act.Error
				p.record(ctx, act, n)
				return
			}
			act.Detail += "; etcd member removed"
		}
		if err := deleteNode(ctx, r.Client, *n); err != nil {
			act.Error = err.Error()
			p.rep.Blocked[key] = "replace held: " + act.Error
			p.record(ctx, act, n)
			return
		}
		act.Detail += "; Node deleted"
	}
	card := 0
	if rec != nil && rec.Step == stepReplace {
		card = rec.Cardinality
	} else if role := p.svc.Role(m.Role); role != nil {
		card = role.Cardinality
	}
	next := &ladder{Step: stepReplace, Role: m.Role, Node: act.Node, Cardinality: card}
	r.ladders[id] = next
	if err := r.Actor.Action(ctx, id, actTerminate, nil); err != nil {
		// Sent again after ActionTimeout, not every pass: a refusal
		// (oned: not available in this state) holds until the state
		// changes.
		next.At, next.Refused, next.RefusedAt = p.now, bounded(err.Error(), 200), p.now
		act.Error = "terminate: " + err.Error() + fmt.Sprintf("; tried again in %s", r.Config.ActionTimeout)
		p.rep.Blocked[key] = "replace: " + act.Error
		p.record(ctx, act, m.Node)
		return
	}
	next.At = p.now
	act.Detail += fmt.Sprintf("; terminate sent (role %s to be restored to %d)", m.Role, card)
	p.rep.InFlight[key] = "replace: terminate sent"
	p.record(ctx, act, m.Node)
}

// scale restores the role's cardinality once the VM is gone, only while
// the service is RUNNING; a refusal waits ScaleRetry.
func (p *pass) scale(ctx context.Context, id int, rec *ladder) {
	r, key := p.r, strconv.Itoa(id)
	rec.Step = stepScale // the VM is gone: from now on only the scale is owed
	act := RemediateAction{VM: id, Node: rec.Node, Role: rec.Role, Step: string(stepScale)}
	role := p.svc.Role(rec.Role)
	if role == nil {
		delete(r.ladders, id)
		act.Detail = "role " + rec.Role + " is gone from the service"
		p.record(ctx, act, nil)
		return
	}
	do, done, why := scaleVerdict(p.svc.State, role.Cardinality, rec.Cardinality, rec.Role, p.troubleLeft())
	switch {
	case done:
		delete(r.ladders, id)
		act.Detail = "role " + rec.Role + ": " + why
		p.record(ctx, act, nil)
		return
	case !do:
		p.rep.InFlight[key] = "scale: " + why
		return
	}
	if err := r.Actor.ScaleRole(ctx, rec.Role, rec.Cardinality); err != nil {
		rec.Refused, rec.RefusedAt = bounded(err.Error(), 200), p.now
		act.Error = "OneFlow refused the scale: " + err.Error()
		p.rep.Blocked[key] = "scale: " + act.Error + fmt.Sprintf("; next try after %s", r.Config.ScaleRetry)
		p.record(ctx, act, nil)
		return
	}
	delete(r.ladders, id)
	act.Detail = "role " + rec.Role + ": " + why
	p.record(ctx, act, nil)
}

// record keeps an action for the status, logs it, and records it as an
// Event on its Node (node, else the Node's last known name).
func (p *pass) record(ctx context.Context, act RemediateAction, node *corev1.Node) {
	r := p.r
	act.At = p.now.UTC()
	r.actions = append(r.actions, act)
	if len(r.actions) > maxActions {
		r.actions = r.actions[len(r.actions)-maxActions:]
	}
	log := r.Log.With("vm", act.VM, "node", act.Node, "role", act.Role, "step", act.Step, "detail", act.Detail)
	if act.Error != "" {
		log.Warn("remediation step failed or held", "error", act.Error)
	} else {
		log.Info("remediation step")
	}
	if act.Node == "" {
		return
	}
	msg := fmt.Sprintf("VM %d: %s: %s", act.VM, act.Step, act.Detail)
	if act.Error != "" {
		msg += ": " + act.Error
	}
	var uid types.UID
	if node != nil {
		uid = node.UID
	}
	if err := nodeEvent(ctx, r.Client, act.Node, uid, p.now, act.Error != "", msg); err != nil {
		r.Log.Warn("recording the remediation event failed", "node", act.Node, "error", err)
	}
}
