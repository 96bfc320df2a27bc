package flow

import "errors"

// Sentinel errors; callers match them with errors.Is.
var (
	// ErrVersion: a OneFlow data model other than 6 or 7 was asked for.
	ErrVersion = errors.New("unsupported OneFlow version")
	// ErrSpec: the cluster spec is malformed or inconsistent.
	ErrSpec = errors.New("invalid cluster spec")
	// ErrRole: a role other than master or worker was asked for.
	ErrRole = errors.New("unknown role")
)
