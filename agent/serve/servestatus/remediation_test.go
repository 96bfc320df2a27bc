package servestatus

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The remediation rows of `onekube-agent status`: state, short-circuit,
// verdicts, rungs in flight and held, the last actions.
func TestRemediationText(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	s := &Status{Acting: true, Identity: "master-10", Loops: map[string]LoopStatus{"remediate": {Report: RemediateReport{
		State:     "on",
		Stopped:   []string{"2 of 3 workers unhealthy, more than 40%"},
		Unhealthy: map[string]string{"12": "Node worker-12 Ready=Unknown for 6m0s"},
		InFlight:  map[string]string{"12": "poweroff sent"},
		Blocked:   map[string]string{"15": "replace held: etcd member not removed: quorum"},
		Actions:   []RemediateAction{{At: at, VM: 12, Node: "worker-12", Step: "poweroff", Detail: "power it off"}, {At: at, VM: 15, Step: "replace", Error: "quorum"}},
	}}}}
	var b bytes.Buffer
	if err := s.WriteText(&b, at); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"remediation:      on\n",
		"  STOPPED:        2 of 3 workers unhealthy, more than 40%\n",
		"  unhealthy:      VM 12: Node worker-12 Ready=Unknown for 6m0s\n",
		"  in flight:      VM 12: poweroff sent\n",
		"  held:           VM 15: replace held: etcd member not removed: quorum\n",
		"  did:            2026-11-28T12:00:00Z VM 12 (worker-12) poweroff: power it off\n",
		"  did:            2026-11-28T12:00:00Z VM 15 replace: FAILED: quorum\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, b.String())
		}
	}
}
