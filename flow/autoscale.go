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
