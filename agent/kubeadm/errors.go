package kubeadm

import "errors"

// Sentinels, wrapped with detail by the functions that return them, so
// callers can tell bad input (fix the template) from a failed command (look at
// the node).
var (
	// ErrToken: a bootstrap token is not [a-z0-9]{6}.[a-z0-9]{16}.
	ErrToken = errors.New("invalid bootstrap token")
	// ErrHash: a discovery hash is not 64 hex digits with an optional "sha256:".
	ErrHash = errors.New("invalid CA certificate hash")
	// ErrCACert: the PEM given as the cluster CA is not a CA certificate.
	ErrCACert = errors.New("invalid CA certificate")
	// ErrVersion: a Kubernetes version is malformed or unsupported.
	ErrVersion = errors.New("invalid Kubernetes version")
	// ErrParams: init or join parameters cannot produce a valid config.
	ErrParams = errors.New("invalid kubeadm parameters")
)
