package protocol

import "time"

// Phase names, published by every VM as ONEGATE_K8S_PHASE (a claim: see
// docs/trust.md) and recorded in the agent's state.
const (
	PhaseDiscover       = "discover"
	PhasePreflight      = "preflight"
	PhaseHostname       = "hostname"
	PhaseToken          = "token"
	PhaseRenderInit     = "render-init"
	PhaseKubeadmInit    = "kubeadm-init"
	PhaseWorkerRBAC     = "worker-rbac"
	PhaseCNI            = "cni"
	PhaseDiscoveryHash  = "discovery-hash"
	PhaseWaitMaster     = "wait-master"
	PhaseRenderJoin     = "render-join"
	PhaseKubeadmJoin    = "kubeadm-join"
	PhaseLBSeed         = "lb-seed"
	PhaseWaitTurn       = "wait-turn"
	PhaseCertKeyRequest = "cert-key-request"
	PhaseWaitCertKey    = "wait-cert-key"
	PhasePublish        = "publish"
	// Outcomes rather than phases.
	PhaseFailed = "failed"
	PhaseDone   = "done"
)

// TokenSafetyMargin is how much life a published join token must have
// left for a worker to start a join with it: kubeadm uses the token twice
// within about a minute (discovery, then the kubelet's TLS bootstrap).
// Workers hold to it; serve replaces a token at max(TTL/2, 2×margin) left,
// so a waiting worker sees a fresh one instead of a dying one.
const TokenSafetyMargin = 5 * time.Minute
