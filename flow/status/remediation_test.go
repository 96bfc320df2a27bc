package status

import (
	"bytes"
	"strings"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow/register/registertest"
)

// The acting master's remediation line shows in status; a standby's is
// not read (it would be stale, or written by anyone).
func TestLivingRemediation(t *testing.T) {
	master := func(id int, serve, line string) VM {
		ut := map[string]string{"READY": "YES", vmcontext.KeyPubNodeName: "master-" + itoa(id), vmcontext.KeyPubServe: serve,
			vmcontext.KeyPubRemediation: line}
		return FromOned(onedVM(t, registertest.VM{ID: id, State: 3, LCM: 3, UserTemplate: ut}))
	}
	vms := map[int]VM{
		10: master(10, "acting", "VM 12 Node worker-12 Ready=Unknown for 6m0s (poweroff sent)"),
		11: master(11, "standby", "stale line"),
	}
	svc := Service{ID: 1, Name: "k", State: 2, Roles: []Role{{Name: "master", State: 2, Cardinality: 2, VMIDs: []int{10, 11}}}}
	var table bytes.Buffer
	if err := WriteTable(&table, Summarize(svc, vms)); err != nil {
		t.Fatal(err)
	}
	if want := "remediation: VM 12 Node worker-12 Ready=Unknown for 6m0s (poweroff sent)\n"; !strings.Contains(table.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, table.String())
	}
	if strings.Contains(table.String(), "stale line") {
		t.Errorf("a standby's line is shown:\n%s", table.String())
	}
}
