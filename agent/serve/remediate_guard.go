package serve

import "fmt"

// shortCircuit says why a group (the masters, or the workers of every
// other role) is left alone: more of it is unhealthy than the limit,
// which points to a partition or a bad image rather than broken VMs
// (CAPI's maxUnhealthy). "" lets remediation go on.
func shortCircuit(master bool, total, unhealthy int, cfg RemediateConfig) string {
	if unhealthy == 0 {
		return ""
	}
	if master {
		if unhealthy > cfg.MaxUnhealthyMasters {
			return fmt.Sprintf("%d of %d masters unhealthy or NotReady, more than %d: a partition or a bad image? nothing is done to the masters", unhealthy, total, cfg.MaxUnhealthyMasters)
		}
		return ""
	}
	if unhealthy*100 > cfg.MaxUnhealthyWorkersPct*total {
		return fmt.Sprintf("%d of %d workers unhealthy or NotReady, more than %d%%: a partition or a bad image? nothing is done to the workers", unhealthy, total, cfg.MaxUnhealthyWorkersPct)
	}
	return ""
}

// quorumGuard says why a step on one unhealthy master would leave etcd
// without quorum, "" when it would not. masters is how many masters the
// service has (one stacked etcd member each), healthy how many of them
// are not unhealthy (the target is not among them). A poweroff keeps the
// target's member, so the healthy others must be a majority of all of
// them; a replacement removes it first, so they must be a majority of
// the members left. The acting master's etcd client checks the same
// against the live member list before it removes anything
// (etcdm.CheckRemoval); this guard stops earlier, before the drain.
func quorumGuard(masters, healthy int, removal bool) string {
	members := masters
	if removal {
		members--
	}
	switch {
	case masters <= 1:
		return "the only master: replacing it would end the cluster"
	case healthy < members/2+1:
		what := "powering it off"
		if removal {
			what = "removing its etcd member"
		}
		return fmt.Sprintf("%s would leave %d healthy of %d etcd members, below quorum (%d)", what, healthy, members, members/2+1)
	}
	return ""
}

// gateIn is what blockedBy weighs for one rung.
type gateIn struct {
	Do  step
	Rec *ladder // nil: the ladder would start now
	// Paused is why the owner stopped remediation ("" when not).
	Paused string
	// Stopped is the short-circuit of the VM's group ("" when none).
	Stopped string
	Self    bool // the acting master's own VM
	Master  bool
	// Masters and SickMasters count the master role's VMs.
	Masters, SickMasters int
	// OtherMaster: another master's ladder is on a rung short of the
	// scale; masters are remediated one at a time.
	OtherMaster bool
	// EtcdHelper: this master can remove etcd members.
	EtcdHelper bool
}

// blockedBy says why a rung may not be taken now, "" when it may. Only
// the owner's pause, a short-circuit or quorum stops a rung; waiting,
// forgetting a record and restoring a cardinality are never stopped by a
// short-circuit (restoring adds a VM). A short-circuit still lets a VM
// this master powered off be resumed: leaving it off would be worse.
func blockedBy(in gateIn) string {
	switch in.Do {
	case stepNone, stepWait, stepClear:
		return ""
	}
	if in.Paused != "" {
		return in.Paused
	}
	if in.Self {
		return "the acting master does not remediate itself"
	}
	if in.Stopped != "" {
		ownPoweroff := in.Do == stepResume && in.Rec != nil && in.Rec.Step == stepPowerOff
		if in.Do != stepScale && !ownPoweroff {
			return in.Stopped
		}
	}
	if !in.Master {
		return ""
	}
	if in.Rec == nil && in.OtherMaster {
		return "another master is being remediated; one at a time"
	}
	healthy := in.Masters - in.SickMasters
	switch in.Do {
	case stepPowerOff:
		return quorumGuard(in.Masters, healthy, false)
	case stepReplace:
		if !in.EtcdHelper {
			return "no etcd membership helper on this master: a master is not replaced"
		}
		return quorumGuard(in.Masters, healthy, true)
	}
	return ""
}
