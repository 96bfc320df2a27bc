package status

import (
	"io"
	"strconv"
	"testing"
)

// BenchmarkSummarizeRender: one poll's pure work for a 200-VM cluster.
func BenchmarkSummarizeRender(b *testing.B) {
	svc := Service{ID: 1, Name: "big", State: 1, Roles: []Role{{Name: "master", State: 2, Cardinality: 3, VMIDs: []int{0, 1, 2}}}}
	vms := map[int]VM{}
	w := Role{Name: "worker", State: 1, Cardinality: 197}
	for id := range 200 {
		if id >= 3 {
			w.VMIDs = append(w.VMIDs, id)
		}
		vms[id] = VM{ID: id, Name: "vm-" + strconv.Itoa(id), State: "ACTIVE", LCMState: "RUNNING", IP: "10.0.0.1",
			Phase: "kubeadm-join", NodeName: "node-" + strconv.Itoa(id), Error: "some error text that is long enough to be truncated in the table view"}
	}
	svc.Roles = append(svc.Roles, w)
	b.ReportAllocs()
	for b.Loop() {
		r := Summarize(svc, vms)
		if err := WriteTable(io.Discard, r); err != nil {
			b.Fatal(err)
		}
		if err := WriteJSON(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}
