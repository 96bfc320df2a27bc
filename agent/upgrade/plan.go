package upgrade

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/onekube/onekube/agent/kversion"
)

// The plan lives in one ConfigMap that only cluster-admin writes: the
// owner's intent (written by `onekube-flow upgrade` with the owner's admin
// kubeconfig) and the acting master's grants. Workers read it through a
// Role for system:nodes limited to this one name (EnsurePlanRBAC in
// agent/serve). It is never read from OneGate: any VM of the service can
// write a USER_TEMPLATE (docs/trust.md).
const (
	PlanNamespace = "kube-system"
	PlanName      = "onekube-upgrade"

	// Keys the owner's CLI writes.
	KeyTarget       = "targetVersion"
	KeyBundleImage  = "bundleImageID"
	KeyBundleSHA256 = "bundleSHA256"
	// KeyAttempt counts the CLI's runs; a node retries a failed step once
	// it sees a new attempt, which is how "run the command again" resumes.
	KeyAttempt = "attempt"
	// KeyBatch is how many workers may upgrade at once (BatchSize caps it).
	KeyBatch = "batch"

	// Keys the acting master writes.
	KeyGrantPrefix   = "grant."    // grant.<node> = <mode>: the node may run its upgrade
	KeyCordonPrefix  = "cordoned." // cordoned.<node> = "true": serve cordoned it, serve uncordons it
	KeyStopped       = "stopped"   // the rollout's reason to stop; cleared by the CLI's next run
	KeyPhase         = "phase"     // a line for status
	PhaseDone        = "done"
	AnnotationStep   = "onekube.io/upgrade-step"  // on a Node, by its own kubelet credential: "<version> <step>"
	AnnotationError  = "onekube.io/upgrade-error" // on a Node: why its last step failed
	BundleSHA256Attr = "ONEKUBE_BUNDLE_SHA256"    // the image template attribute the CLI reads
)

// Mode is the kubeadm step a node is granted.
type Mode string

const (
	ModeApply Mode = "apply" // `kubeadm upgrade apply`: the first control plane only
	ModeNode  Mode = "node"  // `kubeadm upgrade node`: every other node
)

// Plan is the owner's intent.
type Plan struct {
	Target      kversion.Version
	BundleImage int
	BundleSHA   string
	Attempt     int
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ParsePlan reads the owner's keys of the plan ConfigMap's data.
func ParsePlan(data map[string]string) (Plan, error) {
	var p Plan
	var err error
	if p.Target, err = kversion.ParseVersion(data[KeyTarget]); err != nil {
		return Plan{}, fmt.Errorf("upgrade plan: %s: %w", KeyTarget, err)
	}
	if p.BundleImage, err = strconv.Atoi(data[KeyBundleImage]); err != nil || p.BundleImage < 0 {
		return Plan{}, fmt.Errorf("upgrade plan: %s %q is not an image ID", KeyBundleImage, data[KeyBundleImage])
	}
	if p.BundleSHA = data[KeyBundleSHA256]; !sha256Hex.MatchString(p.BundleSHA) {
		return Plan{}, fmt.Errorf("upgrade plan: %s must be 64 lowercase hex digits", KeyBundleSHA256)
	}
	if a := data[KeyAttempt]; a != "" {
		if p.Attempt, err = strconv.Atoi(a); err != nil || p.Attempt < 0 {
			return Plan{}, fmt.Errorf("upgrade plan: %s %q is not a count", KeyAttempt, a)
		}
	}
	return p, nil
}

// Data renders the owner's keys.
func (p Plan) Data() map[string]string {
	return map[string]string{
		KeyTarget:       p.Target.String(),
		KeyBundleImage:  strconv.Itoa(p.BundleImage),
		KeyBundleSHA256: p.BundleSHA,
		KeyAttempt:      strconv.Itoa(p.Attempt),
	}
}

// Grants reads the acting master's grants from the plan's data.
func Grants(data map[string]string) map[string]Mode {
	out := map[string]Mode{}
	for k, v := range data {
		if node, ok := strings.CutPrefix(k, KeyGrantPrefix); ok && (Mode(v) == ModeApply || Mode(v) == ModeNode) {
			out[node] = Mode(v)
		}
	}
	return out
}

// Step is one step of a node's executor, in order.
type Step string

const (
	StepAttach  Step = "attach"
	StepMount   Step = "mount"
	StepVerify  Step = "verify"
	StepKubeadm Step = "install-kubeadm"
	StepImages  Step = "import-images"
	StepUpgrade Step = "kubeadm-upgrade"
	StepKubelet Step = "install-kubelet"
	StepDetach  Step = "detach"
	StepDone    Step = "done"
	StepFailed  Step = "failed"
)

// Steps is the executor's order (docs/upgrades.md): kubeadm first, as
// kubeadm's procedure says, then the images kubeadm's static pods need
// offline, the kubeadm step, and the kubelet last.
var Steps = []Step{StepAttach, StepMount, StepVerify, StepKubeadm, StepImages, StepUpgrade, StepKubelet, StepDetach, StepDone}

// StepClaim is a node's annotation, "<version> <step>". It is that node's
// own claim (its kubelet credential wrote it; NodeRestriction lets a
// kubelet edit only its own Node), so it may only speak for that node.
type StepClaim struct {
	Version kversion.Version
	Step    Step
}

// FormatStepClaim renders the annotation.
func FormatStepClaim(v kversion.Version, s Step) string { return v.String() + " " + string(s) }

// ParseStepClaim reads the annotation; anything malformed is no claim.
func ParseStepClaim(s string) (StepClaim, bool) {
	vs, st, ok := strings.Cut(s, " ")
	if !ok {
		return StepClaim{}, false
	}
	v, err := kversion.ParseVersion(vs)
	if err != nil {
		return StepClaim{}, false
	}
	step := Step(st)
	if step != StepFailed && stepIndex(step) < 0 {
		return StepClaim{}, false
	}
	return StepClaim{v, step}, true
}

func stepIndex(s Step) int {
	for i, x := range Steps {
		if x == s {
			return i
		}
	}
	return -1
}
