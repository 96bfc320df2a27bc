package agent

// Phase names, published as ONEGATE_K8S_PHASE and recorded in the state.
const (
	PhaseDiscover         = "discover"
	PhaseToken            = "token"
	PhaseRenderInit       = "render-init"
	PhaseKubeadmInit      = "kubeadm-init"
	PhaseCNI              = "cni"
	PhaseDiscoveryHash    = "discovery-hash"
	PhaseWaitMaster       = "wait-master"
	PhaseRenderJoin       = "render-join"
	PhaseKubeadmJoin      = "kubeadm-join"
	PhaseControlPlaneJoin = "control-plane-join"
	PhasePublish          = "publish"
)

// discoverPhases is the start of every boot: who am I, who are the masters.
func discoverPhases(resolve func() (Config, error)) []Phase {
	return []Phase{
		{Name: PhaseDiscover, Run: discoverPhase(resolve)},
	}
}

// phasesFor is the rest of the boot, in order, for each kind of node. This
// function is the one place to read to know what a VM does.
func phasesFor(k Kind) []Phase {
	switch k {
	case KindInit:
		return []Phase{
			{Name: PhaseToken, Run: createToken, Once: true},
			{Name: PhaseRenderInit, Run: renderInit, RunIf: notDone(PhaseKubeadmInit)},
			{Name: PhaseKubeadmInit, Run: kubeadmInit, Once: true},
			{Name: PhaseCNI, Run: installCNI, Once: true, RunIf: wantsCNI},
			{Name: PhaseDiscoveryHash, Run: discoveryHash},
			{Name: PhasePublish, Run: publishMaster},
		}
	case KindWorker:
		return []Phase{
			{Name: PhaseWaitMaster, Run: waitMaster, RunIf: notDone(PhaseKubeadmJoin)},
			{Name: PhaseRenderJoin, Run: renderJoin, RunIf: notDone(PhaseKubeadmJoin)},
			{Name: PhaseKubeadmJoin, Run: kubeadmJoin, Once: true},
			{Name: PhasePublish, Run: publishWorker},
		}
	case KindControlPlane:
		// HA slots in here: wait-master (for a certificate key too),
		// render-join with JoinParams.ControlPlane, kubeadm-join, publish.
		return []Phase{
			{Name: PhaseControlPlaneJoin, Run: controlPlaneJoin},
		}
	}
	return nil
}

// notDone skips a phase whose work a completed later phase made moot: after
// kubeadm-join, the master's join data is no longer needed.
func notDone(phase string) func(Data) (bool, error) {
	return func(d Data) (bool, error) { return !d.State().Done(phase), nil }
}
