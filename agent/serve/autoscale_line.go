package serve

import (
	"fmt"
	"strings"
)

// autoscaleLine is ONEGATE_K8S_AUTOSCALE: one bounded line of the
// autoscaler's state (bounds, cardinality, pending pods, the refusal that
// holds, the last scale each way), for `onekube-flow status`.
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
			parts = append(parts, p.label+": "+p.v)
		}
	}
	s := strings.NewReplacer(`"`, "'", "[", "(", "]", ")", `\`, "/", "\n", " ", "\r", " ", ",", ";").Replace(strings.Join(parts, " | "))
	return bounded(s, 480)
}
