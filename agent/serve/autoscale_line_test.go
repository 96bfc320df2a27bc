package serve

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/onekube/onekube/agent/autoscale"
	vmcontext "github.com/onekube/onekube/context"
)

func TestAutoscaleLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		r    AutoscaleReport
		want string
	}{
		{"idle", AutoscaleReport{Min: 1, Max: 3, Cardinality: 1}, "workers 1 (bounds 1:3)"},
		{"pending and refused", AutoscaleReport{Min: 1, Max: 3, Cardinality: 3, Pending: 2, OverMax: []string{"a/b"},
			Refused: `OneFlow refused "x"`}, "workers 3 (bounds 1:3) | 2 pods unschedulable | 1 wait past the maximum | refused: OneFlow refused 'x'"},
		{"scaled", AutoscaleReport{Min: 1, Max: 3, Cardinality: 2, Unneeded: map[string]string{"w": "t"},
			LastScaleUp: "t1: worker 1 -> 2: 1 unschedulable pods fit 1 new workers (default/a, default/b)", LastScaleDown: "t2: node w (VM 5) drained\nand terminated"},
			"workers 2 (bounds 1:3) | 1 nodes unneeded | last up: t1: worker 1 -> 2: 1 unschedulable pods fit 1 new workers (default/a; default/b) | last down: t2: node w (VM 5) drained and terminated"},
	}
	for _, c := range cases {
		if got := autoscaleLine(c.r); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	long := AutoscaleReport{Note: strings.Repeat("n", 2000)}
	if n := len(autoscaleLine(long)); n > autoscaleLineMax+3 {
		t.Errorf("the line is %d bytes", n)
	}
}

// A long part (a scale-up naming long pod names, a refusal) is cut on its
// own: every later part, the last scale-down included, stays whole.
func TestAutoscaleLineKeepsEveryPart(t *testing.T) {
	t.Parallel()
	pod := "default/" + strings.Repeat("a-very-long-deployment-name-", 8)
	r := AutoscaleReport{Min: 0, Max: 3, Cardinality: 2, Pending: 3,
		Refused:       "OneFlow refused cardinality 3 for role worker (likely the role's max_vms; OneGate does not say): not asked again until the service changes",
		Note:          strings.Repeat("ü", 300),
		LastScaleUp:   "2026-11-28T12:00:00Z: worker 0 -> 2: 3 unschedulable pods fit 2 new workers (" + pod + "1, " + pod + "2, " + pod + "3)",
		LastScaleDown: "2026-11-28T12:30:00Z: node worker-13 (VM 13) drained and terminated; worker 2 -> 1 when OneFlow drops it"}
	line := autoscaleLine(r)
	for _, want := range []string{"workers 2 (bounds 0:3) | 3 pods unschedulable", "| refused: OneFlow refused cardinality 3 for role worker (likely the role's max_vms; OneGate does not say): not asked again until the service changes |",
		"| last up: 2026-11-28T12:00:00Z: worker 0 -> 2", "| last down: 2026-11-28T12:30:00Z: node worker-13 (VM 13) drained and terminated; worker 2 -> 1 when OneFlow drops it"} {
		if !strings.Contains(line, want) {
			t.Errorf("line lacks %q:\n%s", want, line)
		}
	}
	if !utf8.ValidString(line) || len(line) > autoscaleLineMax {
		t.Errorf("line of %d bytes, valid UTF-8 %v", len(line), utf8.ValidString(line))
	}
}

// Each tick mirrors the report into ONEGATE_K8S_AUTOSCALE on this master
// (VM 1), for `onekube-flow status`.
func TestAutoscalePublishesLine(t *testing.T) {
	t.Parallel()
	b := newAutoscaleBed(t, autoscale.Bounds{Min: 1, Max: 5},
		asPod("fill-10", "w10", "4", false), asPod("fill-11", "w11", "4", false), asPod("m-fill", "m1", "2", false),
		asPod("big", "", "3", true))
	b.tick(t)
	line := b.svc.ut(1, vmcontext.KeyPubAutoscale)
	if !strings.HasPrefix(line, "workers 2 (bounds 1:5) | 1 pods unschedulable") || !strings.Contains(line, "last up: ") {
		t.Errorf("%s = %q", vmcontext.KeyPubAutoscale, line)
	}
}
