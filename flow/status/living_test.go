package status

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow/register/registertest"
)

// The living cluster's line: who acts, the token's expiry (the latest any
// master mirrors), waiting VMs and Nodes without a VM from the acting
// master; the token itself never appears, in the table or the JSON.
func TestLivingCluster(t *testing.T) {
	const token = "abcdef.0123456789abcdef"
	exp := "2026-11-22T12:40:00Z"
	master := func(id int, serve string, extra map[string]string) VM {
		ut := map[string]string{"READY": "YES", vmcontext.KeyPubPhase: "done", vmcontext.KeyPubNodeName: "master-" + itoa(id),
			vmcontext.KeyPubToken: token, vmcontext.KeyPubTokenExpires: exp, vmcontext.KeyPubServe: serve}
		for k, v := range extra {
			ut[k] = v
		}
		return FromOned(onedVM(t, registertest.VM{ID: id, State: 3, LCM: 3, UserTemplate: ut}))
	}
	vms := map[int]VM{
		10: master(10, "acting", map[string]string{vmcontext.KeyPubWaiting: "12 13", vmcontext.KeyPubNodesWithoutVM: "worker-9",
			vmcontext.KeyPubServeError: "master-8: etcd member not removed: quorum"}),
		11: master(11, "standby", nil),
		12: FromOned(onedVM(t, registertest.VM{ID: 12, State: 3, LCM: 3, UserTemplate: map[string]string{vmcontext.KeyPubPhase: "wait-master"}})),
	}
	svc := Service{ID: 1, Name: "k", State: 2, Roles: []Role{{Name: "master", State: 2, Cardinality: 2, VMIDs: []int{10, 11}}, {Name: "worker", State: 2, Cardinality: 1, VMIDs: []int{12}}}}
	r := Summarize(svc, vms)
	old := Now
	Now = func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) }
	defer func() { Now = old }()
	var table bytes.Buffer
	if err := WriteTable(&table, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"acting master: master-10 (VM 10); join token: expires 2026-11-22T12:40:00Z (in 40m0s); waiting VMs: 12 13; nodes without VM: worker-9",
		"serve error: master-8: etcd member not removed: quorum",
	} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cluster Cluster `json:"cluster"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Cluster.TokenExpires != exp || len(doc.Cluster.Acting) != 1 || strings.Join(doc.Cluster.Waiting, ",") != "12,13" {
		t.Errorf("json cluster %+v", doc.Cluster)
	}
	for _, out := range []string{table.String(), js.String()} {
		if strings.Contains(out, "0123456789abcdef") {
			t.Fatal("the join token leaked")
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
