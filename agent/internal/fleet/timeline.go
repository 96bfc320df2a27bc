package fleet

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegatesim"
)

// Entry is one line of a run's timeline: what a VM (or OneFlow, VM -1)
// did, in virtual time since the instantiate.
type Entry struct {
	At   time.Duration
	VM   int
	Role string
	What string
	seq  int // insertion order: many entries share one virtual instant
}

// shownValues are the published keys whose values a timeline prints; any
// other key (join data, tokens) shows by name only.
var shownValues = []string{vmcontext.KeyPubPhase, vmcontext.KeyReady, vmcontext.KeyPubETA, vmcontext.KeyPubKind}

// note adds a timeline entry for v at virtual time at.
func (f *fleet) note(v *vmRun, at time.Time, what string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.timeline = append(f.timeline, Entry{At: at.Sub(f.t0), VM: v.info.ID, Role: v.info.Role, What: what, seq: len(f.timeline)})
}

// describe says what a PUT /vm published, never a secret's value; an ETA
// reads as virtual seconds since t0.
func describe(u update, t0 time.Time) string {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range u.keys {
			if !yield(k) {
				return
			}
		}
	})
	if u.erase {
		return "OneGate: erase " + strings.Join(keys, ", ")
	}
	var parts []string
	for _, k := range keys {
		name := strings.TrimPrefix(k, "ONEGATE_K8S_")
		if eta, err := time.Parse(time.RFC3339, u.keys[k]); err == nil && k == vmcontext.KeyPubETA {
			parts = append(parts, fmt.Sprintf("%s=t+%.0fs", name, eta.Sub(t0).Seconds()))
		} else if slices.Contains(shownValues, k) {
			parts = append(parts, fmt.Sprintf("%s=%s", name, u.keys[k]))
		} else {
			parts = append(parts, name)
		}
	}
	return "OneGate: " + strings.Join(parts, " ")
}

// sortedTimeline merges the VMs' entries with OneFlow's role and service
// state changes, by virtual time, then by the order they happened.
func (f *fleet) sortedTimeline() []Entry {
	out := slices.Clone(f.timeline)
	for _, e := range f.sim.Events() {
		switch e.Kind {
		case onegatesim.EventRoleState, onegatesim.EventServiceState:
		default:
			continue
		}
		what := "OneFlow: service " + e.Detail
		if e.Role != "" {
			what = fmt.Sprintf("OneFlow: role %s %s", e.Role, e.Detail)
		}
		out = append(out, Entry{At: e.Time.Sub(f.t0), VM: -1, What: what, seq: len(out)})
	}
	slices.SortStableFunc(out, func(a, b Entry) int { return cmp.Compare(a.At, b.At) })
	return out
}
