package serve

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds of ONEGATE_K8S_AUTOSCALE: each labelled part is cut on its own,
// so a long one (a scale-up naming long pod names) never hides the parts
// after it; the whole stays far below what status reads of a value.
const (
	autoscalePartMax = 200
	autoscaleLineMax = 1000
)

// autoscaleLine is ONEGATE_K8S_AUTOSCALE: one bounded line of the
// autoscaler's state (bounds, cardinality, pending pods, the refusal that
// holds, the last scale each way), for `onekube-flow status`, which
// shows each " | "-separated labelled part on a line of its own.
func autoscaleLine(r AutoscaleReport) string {
	parts := []string{fmt.Sprintf("workers %d (bounds %d:%d)", r.Cardinality, r.Min, r.Max)}
	if r.Pending > 0 {
		parts = append(parts, fmt.Sprintf("%d pods unschedulable", r.Pending))
	}
	if len(r.NoTemplate) > 0 {
		parts = append(parts, fmt.Sprintf("%d fit no new worker", len(r.NoTemplate)))
	}
	if len(r.OverMax) > 0 {
		parts = append(parts, fmt.Sprintf("%d wait past the maximum", len(r.OverMax)))
	}
	if len(r.Unneeded) > 0 {
		parts = append(parts, fmt.Sprintf("%d nodes unneeded", len(r.Unneeded)))
	}
	for _, p := range []struct{ label, v string }{
		{"refused", r.Refused}, {"note", r.Note}, {"last up", r.LastScaleUp}, {"last down", r.LastScaleDown},
	} {
		if p.v != "" {
			parts = append(parts, p.label+": "+clipRunes(p.v, autoscalePartMax))
		}
	}
	s := strings.NewReplacer(`"`, "'", "[", "(", "]", ")", `\`, "/", "\n", " ", "\r", " ", ",", ";").Replace(strings.Join(parts, " | "))
	return bounded(s, autoscaleLineMax)
}

// clipRunes cuts s to at most n bytes on a rune boundary, marking the cut.
func clipRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
