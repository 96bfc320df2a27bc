package status

import (
	"bytes"
	"strings"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow/register/registertest"
)

// An upgrade shows per node, holds --wait (in progress) until the acting
// master says done, and fails the status when it stopped; a standby's
// stale line counts for nothing.
func TestUpgradeStatus(t *testing.T) {
	vm := func(id int, ut map[string]string) VM {
		base := map[string]string{"READY": "YES", vmcontext.KeyPubPhase: "done", vmcontext.KeyPubNodeName: "n" + itoa(id)}
		for k, v := range ut {
			base[k] = v
		}
		return FromOned(onedVM(t, registertest.VM{ID: id, State: 3, LCM: 3, UserTemplate: base}))
	}
	svc := Service{ID: 1, Name: "k", State: 2, Roles: []Role{{Name: "master", State: 2, Cardinality: 2, VMIDs: []int{10, 11}}, {Name: "worker", State: 2, Cardinality: 1, VMIDs: []int{12}}}}
	for name, tc := range map[string]struct {
		rollout, stopped, standbyRollout string
		worker, workerErr                string
		outcome                          Outcome
		table                            []string
		reason                           string
	}{
		"in progress": {
			rollout: "v1.37.2 in progress, 2 node(s) granted", worker: "v1.37.2 import-images",
			outcome: InProgress,
			table:   []string{"upgrade: v1.37.2 in progress, 2 node(s) granted", "VM 10 n10: v1.37.2 done", "VM 12 n12: v1.37.2 import-images"},
			reason:  "upgrade v1.37.2 in progress",
		},
		"stopped": {
			rollout: "v1.37.2 in progress, 3 node(s) granted", stopped: "upgrade refused (node-failed): node n12: kubeadm-upgrade: kubeadm upgrade exited 1",
			worker: "v1.37.2 failed", workerErr: "kubeadm-upgrade: kubeadm upgrade exited 1",
			outcome: Failed,
			table:   []string{"UPGRADE STOPPED: upgrade refused (node-failed)", "VM 12 n12: v1.37.2 failed: kubeadm-upgrade: kubeadm upgrade exited 1"},
			reason:  "upgrade stopped (VM 10): upgrade refused (node-failed)",
		},
		"done": {rollout: "v1.37.2 done", worker: "v1.37.2 done", outcome: Ready, table: []string{"upgrade: v1.37.2 done"}},
		"a standby's stale line": {
			rollout: "v1.37.2 done", standbyRollout: "v1.37.2 in progress, 1 node(s) granted", worker: "v1.37.2 done", outcome: Ready,
		},
	} {
		t.Run(name, func(t *testing.T) {
			vms := map[int]VM{
				10: vm(10, map[string]string{vmcontext.KeyPubServe: "acting", vmcontext.KeyPubUpgrade: tc.rollout, vmcontext.KeyPubUpgradeError: tc.stopped, vmcontext.KeyPubNodeUpgrade: "v1.37.2 done"}),
				11: vm(11, map[string]string{vmcontext.KeyPubServe: "standby", vmcontext.KeyPubUpgrade: tc.standbyRollout, vmcontext.KeyPubNodeUpgrade: "v1.37.2 done"}),
				12: vm(12, map[string]string{vmcontext.KeyPubNodeUpgrade: tc.worker, vmcontext.KeyPubNodeUpgradeError: tc.workerErr}),
			}
			r := Summarize(svc, vms)
			if r.Outcome != tc.outcome {
				t.Fatalf("outcome %s (%v), want %s", r.Outcome, r.Reasons, tc.outcome)
			}
			if tc.reason != "" && !strings.Contains(strings.Join(r.Reasons, "\n"), tc.reason) {
				t.Fatalf("reasons %q lack %q", r.Reasons, tc.reason)
			}
			var table bytes.Buffer
			if err := WriteTable(&table, r); err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.table {
				if !strings.Contains(table.String(), want) {
					t.Errorf("table lacks %q:\n%s", want, table.String())
				}
			}
			var js bytes.Buffer
			if err := WriteJSON(&js, r); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(js.String(), `"upgrade": "`+tc.worker+`"`) {
				t.Errorf("JSON lacks the worker's step:\n%s", js.String())
			}
		})
	}
}
