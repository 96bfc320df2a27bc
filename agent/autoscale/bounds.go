package autoscale

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxWorkers bounds ONEAPP_K8S_AUTOSCALE's max: far above any OneFlow role
// a cluster of this kind runs, and small enough that a typo (a port
// number, a memory size) is refused rather than obeyed.
const MaxWorkers = 1000

// Bounds are the worker role's autoscaling limits, from
// ONEAPP_K8S_AUTOSCALE=min:max.
type Bounds struct {
	Min, Max int
}

// ParseBounds reads ONEAPP_K8S_AUTOSCALE. Empty (or blanks) means off:
// ok is false and err nil. Otherwise it must be exactly "min:max" in
// canonical decimal (no sign, no leading zero, no blanks inside), with
// 0 <= min <= max, 1 <= max <= MaxWorkers.
func ParseBounds(s string) (b Bounds, ok bool, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Bounds{}, false, nil
	}
	lo, hi, found := strings.Cut(s, ":")
	if !found {
		return Bounds{}, false, fmt.Errorf("autoscale bounds %s: want min:max, e.g. 1:5", clip(s))
	}
	if b.Min, err = count(lo); err != nil {
		return Bounds{}, false, fmt.Errorf("autoscale bounds %s: min: %w", clip(s), err)
	}
	if b.Max, err = count(hi); err != nil {
		return Bounds{}, false, fmt.Errorf("autoscale bounds %s: max: %w", clip(s), err)
	}
	switch {
	case b.Max < 1:
		return Bounds{}, false, fmt.Errorf("autoscale bounds %s: max must be at least 1", clip(s))
	case b.Min > b.Max:
		return Bounds{}, false, fmt.Errorf("autoscale bounds %s: min is above max", clip(s))
	}
	return b, true, nil
}

func count(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("empty")
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, fmt.Errorf("%s has a leading zero", clip(s))
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%s is not a decimal count", clip(s))
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > MaxWorkers {
		return 0, fmt.Errorf("%s is above %d", clip(s), MaxWorkers)
	}
	return n, nil
}

// clip quotes user input for an error, bounded.
func clip(s string) string {
	const max = 40
	q := strconv.Quote(s)
	if len(q) > max {
		return q[:max] + "…"
	}
	return q
}
