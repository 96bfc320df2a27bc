package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
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
		c.ps.errorf("$", "%v", err)
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
	c.checkMix(root)
	old := oldFormat(root)
	switch {
	case v == VersionAuto && old:
		v = Version6
	case v == VersionAuto:
		v = Version7
	case v == Version7 && old:
		c.ps.warnf("$", "a 6.x document: the 7.x server converts it (vm_template to template_id, vm_template_contents to template_contents, custom_attrs to user_inputs) before checking it")
		v = Version6
	}
	c.server(root, v)
	c.cluster(root, v, opts)
	return c.ps.sorted()
}

// decodeDoc parses one JSON value, keeping numbers exact.
func decodeDoc(doc []byte) (jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return jnode{}, errors.New("empty document")
		}
		return jnode{}, errors.New("not JSON: " + err.Error())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return jnode{}, errors.New("not JSON: data after the top-level value")
	}
	return jnode{v, "$"}, nil
}

// Keys that only one data model has.
var (
	keys6Role = []string{"vm_template", "vm_template_contents", "custom_attrs", "custom_attrs_values"}
	keys7Role = []string{"type", "template_id", "template_contents", "user_inputs", "user_inputs_values"}
)

// oldFormat is the server's old_format?: every role has vm_template or
// vm_template_contents. A 7.x server converts such documents.
func oldFormat(root jnode) bool {
	roles, ok := root.get("roles")
	arr, isArr := roles.arr()
	if !ok || !isArr || len(arr) == 0 {
		return root.has("custom_attrs") && !root.has("user_inputs")
	}
	for i := range arr {
		r := roles.index(i)
		if !r.has("vm_template") && !r.has("vm_template_contents") {
			return false
		}
	}
	return true
}

// checkMix reports documents that mix 6.x and 7.x keys: the 7.x server
// converts only all-6.x documents, the 6.x server ignores 7.x keys.
func (c *checker) checkMix(root jnode) {
	if root.has("custom_attrs") && root.has("user_inputs") {
		c.ps.errorf("$", "mixes 6.x custom_attrs and 7.x user_inputs: use one data model")
	}
	roles, _ := root.get("roles")
	arr, _ := roles.arr()
	var six, seven []string
	for i := range arr {
		r := roles.index(i)
		var has6, has7 []string
		for _, k := range keys6Role {
			if r.has(k) {
				has6 = append(has6, k)
			}
		}
		for _, k := range keys7Role {
			if r.has(k) {
				has7 = append(has7, k)
			}
		}
		if len(has6) > 0 && len(has7) > 0 {
			c.ps.errorf(r.path, "mixes 6.x keys (%s) and 7.x keys (%s) in one role", join(has6), join(has7))
		}
		if len(has6) > 0 {
			six = append(six, r.path)
		} else if len(has7) > 0 {
			seven = append(seven, r.path)
		}
	}
	if len(six) > 0 && len(seven) > 0 {
		c.ps.errorf("$.roles", "6.x roles (%s) next to 7.x roles (%s): the 7.x server converts a document only when every role is 6.x", join(six), join(seven))
	}
}
