package status

import (
	"bytes"
	"strings"
	"testing"
)

// masters builds a service of masters at 10.0.0.1.. with the given VM
// states, VM 1 acting and publishing etcd.
func quorumReport(states []string, etcd string) Report {
	svc := Service{ID: 3, Name: "k8s", State: 2, Roles: []Role{{Name: "master", State: 2, Cardinality: len(states)}}}
	vms := map[int]VM{}
	for i, st := range states {
		id := i + 1
		svc.Roles[0].VMIDs = append(svc.Roles[0].VMIDs, id)
		ip := "10.0.0." + string(rune('0'+id))
		v := VM{ID: id, Name: "m", State: "ACTIVE", LCMState: st, IP: ip, Phase: "done", Ready: true, NodeName: "master-" + ip,
			Master: ip + ":6443", CP: ControlPlaneInfo{Kind: "control-plane", Endpoint: "127.0.0.1:6444", Serve: "standby"}}
		if st == "POWEROFF" {
			v.State, v.LCMState = "POWEROFF", "LCM_INIT"
		}
		if id == 1 {
			v.CP.Kind, v.CP.Serve, v.CP.Etcd = "init", "acting", etcd
		}
		vms[id] = v
	}
	return Summarize(svc, vms)
}

// Quorum is judged from the published members and the VMs' states now: a
// publication from before the loss cannot hide it.
func TestEtcdQuorum(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name            string
		states          []string
		etcd            string
		voters, healthy int
		lost            bool
		doubt           bool // a majority only with the UNKNOWN masters' members
	}{
		{"three healthy", []string{"RUNNING", "RUNNING", "RUNNING"}, "voter@10.0.0.1 voter@10.0.0.2 voter@10.0.0.3", 3, 3, false, false},
		{"one down", []string{"RUNNING", "RUNNING", "POWEROFF"}, "voter@10.0.0.1 voter@10.0.0.2 voter@10.0.0.3", 3, 2, false, false},
		{"two powered off, stale publication", []string{"RUNNING", "POWEROFF", "POWEROFF"}, "voter@10.0.0.1 voter@10.0.0.2 voter@10.0.0.3", 3, 1, true, false},
		{"published unhealthy", []string{"RUNNING", "RUNNING", "RUNNING"}, "voter@10.0.0.1 unhealthy@10.0.0.2 unhealthy@10.0.0.3", 3, 1, true, false},
		{"one of two UNKNOWN: in doubt", []string{"RUNNING", "UNKNOWN"}, "voter@10.0.0.1 voter@10.0.0.2", 2, 1, false, true},
		{"two of three UNKNOWN, etcd may run on: in doubt", []string{"RUNNING", "UNKNOWN", "UNKNOWN"}, "voter@10.0.0.1 voter@10.0.0.2 voter@10.0.0.3", 3, 1, false, true},
		{"UNKNOWN and powered off: lost", []string{"RUNNING", "UNKNOWN", "POWEROFF", "POWEROFF", "POWEROFF"},
			"voter@10.0.0.1 voter@10.0.0.2 voter@10.0.0.3 voter@10.0.0.4 voter@10.0.0.5", 5, 1, true, false},
		{"one UNKNOWN of three: neither", []string{"RUNNING", "RUNNING", "UNKNOWN"}, "voter@10.0.0.1 voter@10.0.0.2 voter@10.0.0.3", 3, 2, false, false},
		{"a stale member votes but never answers", []string{"RUNNING", "RUNNING"}, "voter@10.0.0.1 voter@10.0.0.2 voter@10.0.0.9 voter@10.0.0.8", 4, 2, true, false},
		{"a learner does not vote", []string{"RUNNING", "RUNNING"}, "voter@10.0.0.1 learner@10.0.0.2", 1, 1, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := quorumReport(c.states, c.etcd)
			q := r.ControlPlane.Quorum
			if q == nil || q.Voters != c.voters || q.Healthy != c.healthy || q.Lost != c.lost || q.InDoubt != c.doubt {
				t.Fatalf("quorum %+v, want %d voters, %d healthy, lost %t, in doubt %t", q, c.voters, c.healthy, c.lost, c.doubt)
			}
			var table bytes.Buffer
			if err := WriteTable(&table, r); err != nil {
				t.Fatal(err)
			}
			said := strings.Contains(table.String(), "ETCD HAS LOST QUORUM") && strings.Contains(table.String(), "--new-cluster") &&
				strings.Contains(table.String(), "snapshot restore")
			if said != c.lost {
				t.Errorf("table says lost quorum: %t, want %t:\n%s", said, c.lost, table.String())
			}
			if c.lost && (r.Outcome != Failed || !strings.Contains(strings.Join(r.Reasons, "\n"), "etcd has lost quorum")) {
				t.Errorf("outcome %s, reasons %v", r.Outcome, r.Reasons)
			}
			if doubt := strings.Contains(table.String(), "ETCD QUORUM IN DOUBT"); doubt != c.doubt {
				t.Errorf("table says in doubt: %t, want %t:\n%s", doubt, c.doubt, table.String())
			}
			if c.doubt && (r.Outcome != Failed || !strings.Contains(strings.Join(r.Reasons, "\n"), "etcd quorum in doubt")) {
				t.Errorf("outcome %s, reasons %v", r.Outcome, r.Reasons)
			}
		})
	}
	if r := quorumReport([]string{"RUNNING"}, ""); r.ControlPlane.Quorum != nil {
		t.Errorf("quorum %+v without a published member list", r.ControlPlane.Quorum)
	}
}
