package status

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/OpenNebula/one/src/oca/go/src/goca/schemas/vm"
)

// TestFetchDeadline: when the deadline passes mid-read, Fetch stops asking
// oned, returns what it read with the rest marked as not read, and that is
// a view in progress, not an error, even when nothing was read yet.
func TestFetchDeadline(t *testing.T) {
	t.Parallel()
	const n = 200
	var ids []int
	m := &memVMs{vms: map[int]*vm.VM{0: readyVM(t, 0)}, block: map[int]bool{}}
	for id := range n {
		ids = append(ids, id)
		if id > 0 {
			m.block[id] = true // oned is slow: each read outlasts the deadline
		}
	}
	f := &Fetcher{Flow: &memFlow{docs: []string{serviceDoc(1, ids...)}}, VMs: m, Timeout: 10 * time.Second, Parallel: 4}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	r, err := f.Fetch(ctx, 1)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Fetch took %s past a 100ms deadline", took)
	}
	if err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	calls := m.calls
	m.mu.Unlock()
	if calls > 5 {
		t.Errorf("%d reads started; after the deadline none should start (at most 4 in flight + VM 0)", calls)
	}
	if len(r.VMs) != n || r.ReadyVMs() != 1 || r.Outcome != InProgress {
		t.Errorf("rows %d, ready %d, outcome %s", len(r.VMs), r.ReadyVMs(), r.Outcome)
	}
	for _, v := range r.VMs[1:] {
		if v.ReadError != NotReadDeadline {
			t.Fatalf("VM %d: read error %q, want %q", v.ID, v.ReadError, NotReadDeadline)
		}
	}

	// Nothing read before the deadline: still a view, every VM not read.
	m.block[0] = true
	m.calls = 0
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	r, err = f.Fetch(ctx, 1)
	if err != nil || r.Outcome != InProgress || r.VMs[0].ReadError != NotReadDeadline || !strings.Contains(strings.Join(r.Reasons, "; "), "VM 0") {
		t.Errorf("nothing read: %v, %s, %+v", err, r.Outcome, r.VMs[0])
	}

	// Fetcher.Deadline bounds each Fetch (each round of Wait) by itself.
	m.block[0] = false
	f.Deadline = 100 * time.Millisecond
	start = time.Now()
	r, err = f.Fetch(context.Background(), 1)
	if took := time.Since(start); err != nil || took > 2*time.Second || r.NotRead != n-1 || r.ReadyVMs() != 1 {
		t.Errorf("Fetcher.Deadline: %v after %s, %d not read, %d ready", err, took, r.NotRead, r.ReadyVMs())
	}
	if want := "199 VMs not read before the deadline: VM 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …"; !slices.Contains(r.Reasons, want) {
		t.Errorf("reasons %q, want %q", r.Reasons, want)
	}
}
