package onegatesim

import (
	"strconv"
	"strings"
	"sync"
	"testing"
)

// attachdisk and detachdisk through OneGate: the params types oned's
// XML-RPC calls take, DISK_IDs and TARGETs numbered as oned numbers them,
// the disk shown in the extended service document and never in OneGate's
// own VM document, and the hypervisor hook told after each change.
func TestDiskHotplug(t *testing.T) {
	for _, version := range []string{"7.4", "6.10"} {
		t.Run(version, func(t *testing.T) { testDiskHotplug(t, version) })
	}
}

func testDiskHotplug(t *testing.T, version string) {
	h := runningService(t, version)
	bundle := h.sim.CreateImage(Image{Name: "onekube-bundle-v1.37.2", Source: "/images/bundle.img"})
	var mu sync.Mutex
	var seen [][]Disk
	h.sim.OnDiskChange(func(vmid int, disks []Disk) {
		if vmid == 101 {
			mu.Lock()
			seen = append(seen, disks)
			mu.Unlock()
		}
	})
	act := func(vm int, body string) resp {
		return h.do(req{method: "POST", path: "/vms/" + itoa(vm) + "/action", vm: vm, body: body, ctype: "application/json"})
	}
	tests := []struct {
		name   string
		body   string
		status int
		msg    string
		disks  []int // DISK_IDs afterwards
	}{
		{"params not a string", `{"action":{"perform":"attachdisk","params":{"DISK":{"IMAGE_ID":0}}}}`, 500, "must be a String", nil},
		{"no DISK", `{"action":{"perform":"attachdisk","params":"NIC=[NETWORK_ID=0]"}}`, 500, "does not include a DISK", nil},
		{"unknown image", `{"action":{"perform":"attachdisk","params":"DISK=[IMAGE_ID=9]"}}`, 500, "Error getting image [9]", nil},
		{"syntax", `{"action":{"perform":"attachdisk","params":"DISK=[IMAGE_ID="}}`, 500, "Error parsing DISK template", nil},
		{"attach", `{"action":{"perform":"attachdisk","params":"DISK=[IMAGE_ID=` + itoa(bundle) + `]"}}`, 204, "", []int{2}},
		{"attach again (non-persistent)", `{"action":{"perform":"attachdisk","params":"DISK=[IMAGE_ID=\"0\"]"}}`, 204, "", []int{2, 3}},
		{"detach with a string id", `{"action":{"perform":"detachdisk","params":"2"}}`, 500, "must be an Integer", []int{2, 3}},
		{"detach unknown", `{"action":{"perform":"detachdisk","params":7}}`, 500, "does not have disk 7", []int{2, 3}},
		{"detach", `{"action":{"perform":"detachdisk","params":2}}`, 204, "", []int{3}},
		{"attach reuses the free target, a new id", `{"action":{"perform":"attachdisk","params":"DISK=[IMAGE_ID=0]"}}`, 204, "", []int{3, 4}},
	}
	for _, tc := range tests {
		r := act(101, tc.body)
		if tc.status == 500 && version == "7.4" {
			tc.msg = msgInternal500 // 7.2+ hides halt 500's message
		}
		if r.status != tc.status || !strings.Contains(r.body, tc.msg) {
			t.Fatalf("%s: %d %q; want %d with %q", tc.name, r.status, r.body, tc.status, tc.msg)
		}
		var ids []int
		for _, d := range h.sim.Disks(101) {
			ids = append(ids, d.DiskID)
		}
		if !equalInts(ids, tc.disks) {
			t.Fatalf("%s: DISK_IDs %v, want %v", tc.name, ids, tc.disks)
		}
	}
	// A sibling may attach a disk to another VM (vm.action_by_id).
	r := h.do(req{method: "POST", path: "/vms/101/action", vm: 100, body: `{"action":{"perform":"attachdisk","params":"DISK=[IMAGE_ID=0]"}}`, ctype: "application/json"})
	if r.status != 204 || len(h.sim.Disks(101)) != 3 {
		t.Fatalf("a sibling's attachdisk = %d %q, %d disks", r.status, r.body, len(h.sim.Disks(101)))
	}
	if r := act(101, `{"action":{"perform":"detachdisk","params":5}}`); r.status != 204 {
		t.Fatalf("detach the sibling's = %d %q", r.status, r.body)
	}
	d := h.sim.Disks(101)
	if d[0].Target != "vdc" || d[1].Target != "vdb" || d[1].Image != "onekube-bundle-v1.37.2" || d[1].Source != "/images/bundle.img" {
		t.Errorf("disks %+v: want vdc (id 3) and vdb (id 4) of the bundle", d)
	}
	if r := h.do(req{method: "GET", path: "/vm", vm: 101}); strings.Contains(r.body, "DISK") {
		t.Errorf("OneGate's VM document shows DISK (build_vm_hash keeps only NICs): %s", r.body)
	}
	r = h.do(req{method: "GET", path: "/service?extended=true", vm: 101})
	for _, frag := range []string{`"DISK":[{`, `"DISK_ID":"3"`, `"DISK_ID":"4"`, `"IMAGE_ID":"0"`, `"TARGET":"vdb"`} {
		if !strings.Contains(r.body, frag) {
			t.Errorf("extended service document lacks %s:\n%.2000s", frag, r.body)
		}
	}
	h.sim.hookWG.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 6 {
		t.Errorf("hook called %d times, want 6 (one per change)", len(seen))
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
