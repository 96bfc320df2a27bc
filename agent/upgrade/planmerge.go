package upgrade

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
)

// NextPlanData is the plan ConfigMap's data after the owner runs
// `onekube-flow upgrade` again (existing is nil when there is none).
//   - The same target and bundle: everything is kept (grants, cordons),
//     the attempt is bumped and the stop cleared, so the rollout goes on
//     where it stopped and failed nodes retry.
//   - A finished rollout, or one that never let a node go: replaced by p.
//   - Another target while nodes are granted: refused, since two targets
//     half-applied is the state kubeadm cannot describe.
//
// A cordon serve made and has not lifted is kept in every case, so it is
// still lifted.
func NextPlanData(existing map[string]string, p Plan, batch int) (map[string]string, error) {
	out := p.Data()
	out[KeyBatch] = strconv.Itoa(max(batch, 1))
	if existing == nil {
		out[KeyAttempt] = "1"
		return out, nil
	}
	old, err := ParsePlan(existing)
	attempt := old.Attempt + 1
	if err != nil {
		attempt = 1
	}
	out[KeyAttempt] = strconv.Itoa(attempt)
	same := err == nil && old.Target == p.Target && old.BundleSHA == p.BundleSHA && old.BundleImage == p.BundleImage
	grants := Grants(existing)
	switch {
	case same:
		kept := maps.Clone(existing)
		delete(kept, KeyStopped)
		maps.Copy(kept, out)
		return kept, nil
	case err == nil && existing[KeyPhase] != PhaseDone && len(grants) > 0:
		return nil, &Refusal{Code: "in-progress", Detail: fmt.Sprintf(
			"an upgrade to %s (bundle image %d) is under way with %d node(s) let go; run the same command with --to %s --bundle %d to finish it first",
			old.Target, old.BundleImage, len(grants), old.Target, old.BundleImage)}
	}
	for k, v := range existing {
		if strings.HasPrefix(k, KeyCordonPrefix) {
			out[k] = v
		}
	}
	return out, nil
}
