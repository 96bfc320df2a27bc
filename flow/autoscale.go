package flow

import (
	"fmt"
	"strconv"
	"strings"
)

// KeyAutoscale is the user input that turns worker autoscaling on:
// "min:max" bounds the worker role's cardinality, empty is off. onekubed
// reads it from the masters' CONTEXT; render also derives the worker role's
// min_vms and max_vms from the spec's default of it.
const KeyAutoscale = "ONEAPP_K8S_AUTOSCALE"

// ParseAutoscale parses a KeyAutoscale value, "min:max" with
// 0 <= min <= max, 1 <= max <= MaxNodes; "" (or blanks) is off. Only
// decimal digits are accepted: "+1", "0x2" and "1.5" are refused.
func ParseAutoscale(s string) (lo, hi int, on bool, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, 0, false, nil
	}
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, false, fmt.Errorf("%s %q: want min:max (e.g. 1:10), or empty for off", KeyAutoscale, s)
	}
	if lo, err = autoscaleBound(a, "min"); err != nil {
		return 0, 0, false, err
	}
	if hi, err = autoscaleBound(b, "max"); err != nil {
		return 0, 0, false, err
	}
	switch {
	case hi < 1:
		return 0, 0, false, fmt.Errorf("%s %q: max must be 1 or more", KeyAutoscale, s)
	case lo > hi:
		return 0, 0, false, fmt.Errorf("%s %q: min %d is above max %d", KeyAutoscale, s, lo, hi)
	}
	return lo, hi, true, nil
}

func autoscaleBound(s, what string) (int, error) {
	if s == "" || len(s) > 4 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%s: %s %q is not a whole number of VMs from 0 to %d", KeyAutoscale, what, s, MaxNodes)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > MaxNodes {
		return 0, fmt.Errorf("%s: %s %q is not a whole number of VMs from 0 to %d", KeyAutoscale, what, s, MaxNodes)
	}
	return n, nil
}

// workerTemplate is vmcontext.KeyWorkerTemplate's value for the master
// role: the worker role's VM size as this render gives it (the role's
// VCPU and MEMORY override its VM template's), which onekubed's autoscaler
// takes as a new worker when the role has no Node to copy (scale from
// zero; agent/autoscale.ParseWorkerSize reads it). Workers register with
// no labels or taints of the spec's, so the value has none.
//
// It is rendered, not read at run time: OneFlow's ${role.xpath} reaches
// only a role's parents (the master role has none) and reads a parent's
// VM, of which a role at zero has none (Role#evaluate, day2-opennebula.md
// §4); a worker's own published size would be a USER_TEMPLATE claim.
func workerTemplate(s Spec) string {
	w, _ := s.Role(RoleWorker)
	return fmt.Sprintf("vcpu=%d memory=%d", w.VCPU, w.MemoryMB)
}
