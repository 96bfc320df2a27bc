package flow

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Severity of a Problem: an Error breaks the server's rules or the cluster;
// a Warning works but probably not as meant.
type Severity int

// Severities, in increasing order.
const (
	Warning Severity = iota + 1
	Error
)

func (s Severity) String() string {
	if s == Error {
		return "error"
	}
	return "warning"
}

// Problem is one finding, printed as "<severity> <path>: <message>". Path is
// a JSON path into the service template ($.roles[1].min_vms) or a field path
// into the cluster spec (worker.count).
type Problem struct {
	Severity Severity
	Path     string
	Message  string
}

func (p Problem) String() string { return fmt.Sprintf("%s %s: %s", p.Severity, p.Path, p.Message) }

// HasErrors reports whether any problem is an Error.
func HasErrors(ps []Problem) bool {
	return slices.ContainsFunc(ps, func(p Problem) bool { return p.Severity == Error })
}

// problems collects findings under a path prefix.
type problems []Problem

func (ps *problems) errorf(path, format string, a ...any) {
	*ps = append(*ps, Problem{Error, path, fmt.Sprintf(format, a...)})
}

func (ps *problems) warnf(path, format string, a ...any) {
	*ps = append(*ps, Problem{Warning, path, fmt.Sprintf(format, a...)})
}

// sorted orders problems by path (array indexes numerically), then errors
// before warnings, then message, and drops exact duplicates.
func (ps problems) sorted() []Problem {
	out := slices.Clone([]Problem(ps))
	slices.SortFunc(out, func(a, b Problem) int {
		if c := naturalCompare(a.Path, b.Path); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Severity, a.Severity); c != 0 {
			return c
		}
		return cmp.Compare(a.Message, b.Message)
	})
	return slices.Compact(out)
}

// naturalCompare compares strings with digit runs compared as numbers, so
// roles[2] sorts before roles[10].
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := a[:da], b[:db]
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digitRun(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

func join(ss []string) string { return strings.Join(ss, ", ") }
