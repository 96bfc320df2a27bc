package agent

import (
	"time"

	"github.com/onekube/onekube/context/onegate"
	"github.com/onekube/onekube/context/protocol"
)

// Phase names, published as ONEGATE_K8S_PHASE and recorded in the state;
// context/protocol owns them, so onekubed and onekube-flow read the same.
const (
	PhaseDiscover       = protocol.PhaseDiscover
	PhasePreflight      = protocol.PhasePreflight
	PhaseHostname       = protocol.PhaseHostname
	PhaseToken          = protocol.PhaseToken
	PhaseRenderInit     = protocol.PhaseRenderInit
	PhaseKubeadmInit    = protocol.PhaseKubeadmInit
	PhaseWorkerRBAC     = protocol.PhaseWorkerRBAC
	PhaseCNI            = protocol.PhaseCNI
	PhaseDiscoveryHash  = protocol.PhaseDiscoveryHash
	PhaseWaitMaster     = protocol.PhaseWaitMaster
	PhaseRenderJoin     = protocol.PhaseRenderJoin
	PhaseKubeadmJoin    = protocol.PhaseKubeadmJoin
	PhaseLBSeed         = protocol.PhaseLBSeed
	PhaseWaitTurn       = protocol.PhaseWaitTurn
	PhaseCertKeyRequest = protocol.PhaseCertKeyRequest
	PhaseWaitCertKey    = protocol.PhaseWaitCertKey
	PhasePublish        = protocol.PhasePublish
)

// discoverPhases is the start of every boot: who am I, who are the
// masters, and is it safe to run kubeadm on this disk at all.
func discoverPhases(resolve func(self *onegate.VM, role string) (Config, error)) []Phase {
	return []Phase{
		// Quiet: a failure still names it, and its report would be one
		// more update per VM in the start-up burst.
		{Name: PhaseDiscover, Run: discoverPhase(resolve), Quiet: true},
		{Name: PhasePreflight, Run: preflight, Quiet: true},
	}
}

// phasesFor is the rest of the boot, in order, for each kind of node. This
// function is the one place to read to know what a VM does.
func phasesFor(k Kind) []Phase {
	switch k {
	case KindInit:
		return []Phase{
			{Name: PhaseHostname, Run: setHostname, Quiet: true},
			{Name: PhaseToken, Run: createToken, Estimate: untilInitDone},
			{Name: PhaseLBSeed, Run: seedBalancer, RunIf: notDone(PhaseKubeadmInit), Quiet: true},
			{Name: PhaseRenderInit, Run: renderInit, RunIf: notDone(PhaseKubeadmInit), Quiet: true},
			{Name: PhaseKubeadmInit, Run: kubeadmInit, Once: true, Estimate: untilInitDone},
			// Before publishing: init's token is a worker token, and
			// serve grants its group only later.
			{Name: PhaseWorkerRBAC, Run: grantWorkerJoin, Quiet: true},
			{Name: PhaseCNI, Run: installCNI, Once: true, RunIf: wantsCNI, Estimate: afterInit},
			{Name: PhaseDiscoveryHash, Run: discoveryHash, Quiet: true},
			{Name: PhasePublish, Run: publishMaster, Quiet: true},
		}
	case KindWorker:
		return []Phase{
			{Name: PhaseHostname, Run: setHostname, Quiet: true},
			{Name: PhaseWaitMaster, Run: waitMaster, RunIf: notDone(PhaseKubeadmJoin), Lazy: true},
			{Name: PhaseLBSeed, Run: seedBalancer, RunIf: notDone(PhaseKubeadmJoin), Quiet: true},
			{Name: PhaseRenderJoin, Run: renderJoin, RunIf: notDone(PhaseKubeadmJoin), Quiet: true},
			// Lazy: announced only when it waits (a stale Node of this
			// name). Announcing every join would add one update per
			// worker to the polls of the two seconds after the master
			// publishes, doubling OneGate's load then (issue 14); the
			// worker shows wait-master, or nothing in a straight
			// deployment, until done or failed.
			{Name: PhaseKubeadmJoin, Run: kubeadmJoin, Once: true, Lazy: true},
			{Name: PhasePublish, Run: publishWorker, Quiet: true},
		}
	case KindControlPlane:
		// Masters join one at a time, in VM-ID order, with the certificate
		// key the acting master grants to this attempt alone (§3).
		return []Phase{
			{Name: PhaseHostname, Run: setHostname, Quiet: true},
			{Name: PhaseLBSeed, Run: seedBalancer, RunIf: notDone(PhaseKubeadmJoin), Quiet: true},
			{Name: PhaseWaitTurn, Run: waitTurn, RunIf: notDone(PhaseKubeadmJoin)},
			{Name: PhaseCertKeyRequest, Run: requestCertKey, RunIf: notDone(PhaseKubeadmJoin)},
			{Name: PhaseWaitCertKey, Run: waitCertKey, RunIf: notDone(PhaseKubeadmJoin)},
			{Name: PhaseRenderJoin, Run: renderJoin, RunIf: notDone(PhaseKubeadmJoin)},
			{Name: PhaseKubeadmJoin, Run: kubeadmJoin, Once: true},
			{Name: PhasePublish, Run: publishControlPlane},
		}
	}
	return nil
}

// untilInitDone and afterInit are a first master's estimates, from the
// start of its phase, of when it publishes (pace.go): kubeadm init, then
// the CNI manifest and the CA hash, seconds on any VM.
func untilInitDone(t *Tunables) time.Duration { return t.InitEstimate + afterInitWork }
func afterInit(*Tunables) time.Duration       { return afterInitWork }

const afterInitWork = 5 * time.Second

// notDone skips a phase whose work a completed later phase made moot: after
// kubeadm-join, the master's join data is no longer needed.
func notDone(phase string) func(Data) (bool, error) {
	return func(d Data) (bool, error) { return !d.State().Done(phase), nil }
}
