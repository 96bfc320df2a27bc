package onegate_test

import (
	"reflect"
	"testing"

	"github.com/onekube/onekube/context/onegate"
)

// TEMPLATE.DISK in the extended service document: one disk arrives as an
// object, several as an array; a disk without a DISK_ID is left out, a
// volatile one has no IMAGE_ID.
func TestDecodeDisks(t *testing.T) {
	doc := func(disk string) []byte {
		return []byte(`{"SERVICE":{"id":"1","name":"s","state":"2","roles":[{"name":"m","cardinality":"1","state":"2","nodes":[{"deploy_id":"5","vm_info":{"VM":{"ID":"5","NAME":"m","STATE":"3","LCM_STATE":"3","USER_TEMPLATE":{},"TEMPLATE":{"DISK":` + disk + `}}}}]}]}}`)
	}
	for name, tc := range map[string]struct {
		disk string
		want []onegate.Disk
	}{
		"one": {`{"DISK_ID":"0","IMAGE_ID":"3","TARGET":"vda"}`, []onegate.Disk{{ID: 0, ImageID: 3, Target: "vda"}}},
		"several": {`[{"DISK_ID":"0","IMAGE_ID":"3","TARGET":"vda"},{"DISK_ID":"2","IMAGE_ID":"118","TARGET":"vdb"},{"DISK_ID":"3","TYPE":"fs","TARGET":"vdc"},{"IMAGE_ID":"9"}]`,
			[]onegate.Disk{{ID: 0, ImageID: 3, Target: "vda"}, {ID: 2, ImageID: 118, Target: "vdb"}, {ID: 3, ImageID: -1, Target: "vdc"}}},
		"odd": {`"x"`, nil},
	} {
		t.Run(name, func(t *testing.T) {
			svc, err := onegate.DecodeService(doc(tc.disk))
			if err != nil {
				t.Fatal(err)
			}
			if got := svc.Roles[0].Nodes[0].VM.Disks; !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Disks = %+v, want %+v", got, tc.want)
			}
		})
	}
}
