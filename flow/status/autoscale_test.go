package status

import (
	"bytes"
	"strings"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow/register/registertest"
)

// The acting master's autoscaler line shows in status; a standby's is
// not read.
func TestLivingAutoscale(t *testing.T) {
	master := func(id int, serve, line string) VM {
		ut := map[string]string{"READY": "YES", vmcontext.KeyPubNodeName: "master-" + itoa(id), vmcontext.KeyPubServe: serve,
			vmcontext.KeyPubAutoscale: line}
		return FromOned(onedVM(t, registertest.VM{ID: id, State: 3, LCM: 3, UserTemplate: ut}))
	}
	vms := map[int]VM{
		10: master(10, "acting", "workers 2 (bounds 1:3) | last up: worker 1 -> 2"),
		11: master(11, "standby", "stale line"),
	}
	svc := Service{ID: 1, Name: "k", State: 2, Roles: []Role{{Name: "master", State: 2, Cardinality: 2, VMIDs: []int{10, 11}}}}
	var table bytes.Buffer
	if err := WriteTable(&table, Summarize(svc, vms)); err != nil {
		t.Fatal(err)
	}
	if want := "autoscale: workers 2 (bounds 1:3)\nautoscale last up: worker 1 -> 2\n"; !strings.Contains(table.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, table.String())
	}
	if strings.Contains(table.String(), "stale line") {
		t.Errorf("a standby's line is shown:\n%s", table.String())
	}
}

// The autoscaler's line as serve publishes it at its longest (four
// labelled parts of up to 200 bytes) reads whole: counts on the
// "autoscale:" line, each labelled part on its own line, nothing cut.
func TestGoldenAutoscale(t *testing.T) {
	t.Parallel()
	pod := "default/web-frontend-7d9c5b8f6-"
	line := "workers 2 (bounds 0:3) | 3 pods unschedulable | 1 fit no new worker" +
		" | refused: OneFlow refused cardinality 3 for role worker (likely the role's max_vms; OneGate does not say): not asked again until the service changes" +
		" | note: no worker Node to copy and no VM size: pending pods cannot be judged" +
		" | last up: 2026-11-28T12:00:00Z: worker 0 -> 2: 3 unschedulable pods fit 2 new workers (" + pod + "1; " + pod + "2; " + pod + "3)" +
		" | last down: 2026-11-28T12:30:00Z: node worker-13 (VM 13) drained and terminated; worker 2 -> 1 when OneFlow drops it"
	ut := map[string]string{"READY": "YES", vmcontext.KeyPubNodeName: "master-10", vmcontext.KeyPubServe: "acting", vmcontext.KeyPubAutoscale: line}
	vms := map[int]VM{10: FromOned(onedVM(t, registertest.VM{ID: 10, State: 3, LCM: 3, UserTemplate: ut}))}
	svc := Service{ID: 1, Name: "k", State: 2, Roles: []Role{{Name: "master", State: 2, Cardinality: 1, VMIDs: []int{10}},
		{Name: "worker", State: 2, Cardinality: 2}}}
	var table bytes.Buffer
	if err := WriteTable(&table, Summarize(svc, vms)); err != nil {
		t.Fatal(err)
	}
	golden(t, "autoscale.txt", table.Bytes())
	for _, part := range strings.Split(line, " | ")[3:] {
		if !strings.Contains(table.String(), "autoscale "+part+"\n") {
			t.Errorf("the table cuts %q:\n%s", part, table.String())
		}
	}
	if strings.Contains(table.String(), "…") {
		t.Errorf("the table cuts the line:\n%s", table.String())
	}
}

// A hostile or garbled line is bounded: a few labelled lines at most.
func TestAutoscaleLinesBounded(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeAutoscale(&b, "workers 1 (bounds 0:3)"+strings.Repeat(" | x: "+strings.Repeat("y", 400), 50))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 1+maxAutoscaleParts+1 || !strings.Contains(lines[len(lines)-1], "44 more parts") {
		t.Errorf("%d lines:\n%s", len(lines), b.String())
	}
	for _, l := range lines {
		if n := len([]rune(l)); n > maxAutoscalePart+len("autoscale ") {
			t.Errorf("a line of %d runes", n)
		}
	}
}
