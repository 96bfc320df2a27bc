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
	if want := "autoscale: workers 2 (bounds 1:3) | last up: worker 1 -> 2\n"; !strings.Contains(table.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, table.String())
	}
	if strings.Contains(table.String(), "stale line") {
		t.Errorf("a standby's line is shown:\n%s", table.String())
	}
}
