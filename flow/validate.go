package flow

import (
	"errors"
)

// ValidateOptions tune Validate.
type ValidateOptions struct {
	// Version forces the data model (Version6, Version7); VersionAuto
	// detects it from the document's keys.
	Version OneFlowVersion
	// NodeNetwork is the nodes' CIDR, if known, checked against the pod
	// and service networks.
	NodeNetwork string
}

// Validate checks a service template, rendered or hand-written: first the
// OneFlow server's own rules for the data model (oneflow.md §2, cross-field
// rules included), then what the server does not check but that breaks a
// deployment or a kubeadm cluster. Problems are sorted; any Error means the
// document should not be used.
func Validate(doc []byte, opts ValidateOptions) []Problem {
	c := &checker{}
	root, err := decodeDoc(doc)
	if err != nil {
		var de *docError
		if errors.As(err, &de) {
			c.ps.errorf(de.path, "%s", de.msg)
		} else {
			c.ps.errorf("$", "%v", err)
		}
		return c.ps.sorted()
	}
	if _, ok := root.obj(); !ok {
		c.ps.errorf("$", "want a JSON object, got %s", typeName(root.v))
		return c.ps.sorted()
	}
	v := opts.Version
	if v != VersionAuto {
		if err := v.check(); err != nil {
			c.ps.errorf("$", "%v", err)
			return c.ps.sorted()
		}
	}
	v = c.model(root, v)
	c.server(root, v)
	c.cluster(root, v, opts)
	return c.ps.sorted()
}
