package agent

import (
	"errors"

	"github.com/onekube/onekube/agent/gate"
)

// Sentinel errors. Phases wrap them with %w; the CLI and tests match them
// with errors.Is.
var (
	// ErrUnauthorized means OneGate rejected this VM's token (HTTP 401):
	// retrying cannot help, so every wait stops at once.
	ErrUnauthorized = gate.ErrUnauthorized
	// ErrMasterTimeout means no master published usable join data before
	// the --master-timeout deadline.
	ErrMasterTimeout = errors.New("timed out waiting for the master")
	// ErrNotInService means OneFlow's service document does not list this
	// VM, or is not the service its SERVICE_ID claims: it was not
	// instantiated by OneFlow, or a sibling rewrote its SERVICE_ID.
	ErrNotInService = errors.New("this VM is not part of a OneFlow service")
	// ErrNoCNIManifest means the image does not carry the chosen CNI.
	ErrNoCNIManifest = errors.New("CNI manifest not found")
	// ErrRefused means the agent will not run kubeadm here because doing so
	// could destroy or fork a live cluster; the message names the way out.
	ErrRefused = errors.New("refusing to touch this node")
	// ErrMasterFailed means the initializing master published
	// ONEGATE_K8S_PHASE=failed: waiting longer cannot help.
	ErrMasterFailed = errors.New("the master failed")
	// ErrVersion means ONEAPP_K8S_VERSION asks for a release the image's
	// kubeadm is not.
	ErrVersion = errors.New("Kubernetes version not in this image")
	// ErrJoinData means the join data this master is about to publish does
	// not check out (a token or hash kubeadm did not use).
	ErrJoinData = errors.New("join data failed its check")
)
