package serve

import (
	"fmt"
	"time"

	"github.com/onekube/onekube/context/onegate"
)

// The remediation ladder (issue 22): (1) power off and resume through
// OneGate; (2) replace: drain, remove a master's etcd member, delete the
// Node, terminate the VM (OneFlow drops it at DONE and lowers the
// cardinality, which also lifts WARNING), then restore the cardinality.
// Reboot is not a rung: OneGate restricts it by default
// (onegate-server.conf :restricted_actions).

// step is one rung, or what the ladder does instead.
type step string

const (
	stepNone     step = ""
	stepWait     step = "wait"     // in flight; nothing to do this pass
	stepClear    step = "clear"    // healthy again, or gone: forget the record
	stepPowerOff step = "poweroff" // OneGate poweroff (hard)
	stepResume   step = "resume"   // OneGate resume
	stepReplace  step = "replace"  // drain, etcd member, Node, terminate (hard)
	stepScale    step = "scale"    // restore the role's cardinality
)

// ladder is what remediation did to one VM, kept by the acting master
// for its term (a new term starts each VM at the bottom again).
type ladder struct {
	Step step
	At   time.Time
	Role string
	Node string
	// Cardinality is the role's size before the terminate, to restore.
	Cardinality int
	// Refused is OneFlow's last refusal of the scale, at RefusedAt.
	Refused   string
	RefusedAt time.Time
}

// vmNow is what the ladder sees of its VM this pass.
type vmNow struct {
	health
	InService  bool // the service document still lists the VM
	PoweredOff bool
}

// decision is the ladder's choice for one VM.
type decision struct {
	Do  step
	Why string
}

// climb chooses the next rung for one VM from its record (nil: none)
// and what the VM looks like now.
func climb(rec *ladder, v vmNow, now time.Time, cfg RemediateConfig) decision {
	if rec == nil {
		switch {
		case !v.unhealthy():
			return decision{Do: stepNone}
		case v.Failed:
			return decision{stepReplace, v.Reason + ": only terminate leads out of a failure"}
		case v.Trouble != "":
			return decision{stepResume, v.Reason + ": resume it"}
		}
		return decision{stepPowerOff, v.Reason + ": power it off, then resume it"}
	}
	since := now.Sub(rec.At).Round(time.Second)
	switch rec.Step {
	case stepPowerOff, stepResume:
		switch {
		case !v.InService:
			return decision{stepClear, "the VM left the service"}
		case rec.Step == stepPowerOff && v.PoweredOff:
			return decision{stepResume, "powered off: resume it"}
		case rec.Step == stepPowerOff && since < cfg.ActionTimeout:
			return decision{stepWait, fmt.Sprintf("poweroff sent %s ago", since)}
		case rec.Step == stepPowerOff:
			return decision{stepReplace, fmt.Sprintf("the poweroff did not take in %s: replace it", cfg.ActionTimeout)}
		case !v.unhealthy():
			return decision{stepClear, "healthy again after the resume"}
		case v.Failed:
			return decision{stepReplace, v.Reason + " after the resume: replace it"}
		case since < cfg.RecoverWait:
			return decision{stepWait, fmt.Sprintf("resumed %s ago; %s to recover", since, cfg.RecoverWait)}
		}
		return decision{stepReplace, fmt.Sprintf("still unhealthy %s after the resume (%s): replace it", since, v.Reason)}
	case stepReplace:
		switch {
		case !v.InService:
			return decision{stepScale, "the VM is gone: restore the cardinality"}
		case since < cfg.ActionTimeout && rec.Refused != "":
			return decision{stepWait, fmt.Sprintf("terminate refused %s ago (%s); next try after %s", since, rec.Refused, rec.At.Add(cfg.ActionTimeout).UTC().Format(time.RFC3339))}
		case since < cfg.ActionTimeout:
			return decision{stepWait, fmt.Sprintf("terminate sent %s ago", since)}
		}
		return decision{stepReplace, fmt.Sprintf("the VM is still in the service %s after the terminate: send it again", since)}
	case stepScale:
		if rec.Refused != "" && now.Sub(rec.RefusedAt) < cfg.ScaleRetry {
			return decision{stepWait, fmt.Sprintf("OneFlow refused the scale (%s); next try after %s", rec.Refused, rec.RefusedAt.Add(cfg.ScaleRetry).UTC().Format(time.RFC3339))}
		}
		return decision{stepScale, "restore the cardinality"}
	}
	return decision{stepClear, "unknown record"}
}

// scaleVerdict decides the cardinality restore: done when the role is
// back at its size (OneFlow's own min_vms rule, or someone, may have
// done it), wait while the service is not RUNNING, since OneFlow refuses
// every scale then (Service#can_scale?: COOLDOWN after each scale,
// WARNING while a VM is in trouble, SCALING, DEPLOYING), and never ask
// blindly. want is the cardinality to restore.
//
// troubleLeft: some VM of the service is still POWEROFF, UNKNOWN or
// failed. A WARNING without one is OneFlow's sticky WARNING: a broken VM
// that reached DONE leaves it, and only a VM emitting RUNNING again ends
// it (ServiceWD running_wd_cb; Service#recover does not, its
// Role#recover_warning is commented out: models/role.rb @release-6.10.5,
// absent @release-7.4.0) or an oneflow-server restart. Remediation does
// not power-cycle a healthy VM to get there; it says what the owner does.
func scaleVerdict(serviceState, cardinality, want int, role string, troubleLeft bool) (do bool, done bool, why string) {
	switch {
	case cardinality >= want:
		return false, true, fmt.Sprintf("cardinality %d, as before", cardinality)
	case serviceState == onegate.ServiceRunning:
		return true, false, fmt.Sprintf("cardinality %d to %d", cardinality, want)
	case serviceState == onegate.ServiceWarning && !troubleLeft:
		return false, false, fmt.Sprintf("OneFlow keeps the service in WARNING after the broken VM went: it leaves WARNING only when a VM emits RUNNING again or oneflow-server restarts."+
			" The owner restarts oneflow-server or power-cycles one VM of role %s (onevm poweroff --hard; onevm resume);"+
			" the cardinality %d to %d is asked then, not before", role, cardinality, want)
	}
	return false, false, fmt.Sprintf("the service is %s, OneFlow would refuse the scale; waiting", serviceStateName(serviceState))
}

func serviceStateName(s int) string {
	switch s {
	case onegate.ServiceDeploying:
		return "DEPLOYING"
	case onegate.ServiceRunning:
		return "RUNNING"
	case onegate.ServiceWarning:
		return "WARNING"
	case onegate.ServiceScaling:
		return "SCALING"
	case onegate.ServiceCooldown:
		return "COOLDOWN"
	}
	return fmt.Sprintf("in state %d", s)
}
