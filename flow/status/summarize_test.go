package status

import (
	"reflect"
	"strconv"
	"testing"
)

func running(id int, phase string, ready bool) VM {
	return VM{ID: id, Name: "vm", State: "ACTIVE", LCMState: "RUNNING", Phase: phase, Ready: ready}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	cluster := func(state, master, worker int) Service {
		return Service{ID: 12, Name: "k", State: state, Roles: []Role{
			{Name: "worker", State: worker, Cardinality: 2, VMIDs: []int{51, 50}},
			{Name: "master", State: master, Cardinality: 1, VMIDs: []int{49}},
		}}
	}
	allDone := map[int]VM{49: running(49, "done", true), 50: running(50, "done", true), 51: running(51, "done", true)}
	with := func(id int, v VM) map[int]VM {
		m := map[int]VM{}
		for k, x := range allDone {
			m[k] = x
		}
		v.ID = id
		m[id] = v
		return m
	}
	for _, tc := range []struct {
		name    string
		svc     Service
		vms     map[int]VM
		outcome Outcome
		reasons []string
	}{
		{"all ready", cluster(2, 2, 2), allDone, Ready, nil},
		{"legacy READY without phase", cluster(2, 2, 2), with(50, running(0, "", true)), Ready, nil},
		{"deploying", cluster(1, 2, 1), with(51, running(0, "wait-master", false)), InProgress,
			[]string{"service is DEPLOYING", "VM 51 (worker): phase wait-master"}},
		{"running but a VM not ready", cluster(2, 2, 2), with(49, running(0, "", false)), InProgress,
			[]string{"VM 49 (master): RUNNING, no agent phase yet"}},
		{"pending with fewer VMs than cardinality", Service{ID: 1, State: 0, Roles: []Role{{Name: "master", Cardinality: 1}}}, nil, InProgress,
			[]string{"service is PENDING", "role master has 0 of 1 VMs", "no VMs yet"}},
		{"unreadable VM", cluster(2, 2, 2), with(50, VM{ReadError: "oned: timeout"}), InProgress, []string{"VM 50: unreadable"}},
		{"VM missing from the map", cluster(2, 2, 2), map[int]VM{49: allDone[49], 51: allDone[51]}, InProgress, []string{"VM 50: unreadable"}},
		{"agent failed", cluster(1, 2, 1), with(50, VM{State: "ACTIVE", LCMState: "RUNNING", Phase: "failed", Error: "kubeadm join: exit 1"}), Failed,
			[]string{"VM 50 (worker): agent failed: kubeadm join: exit 1"}},
		{"boot failure", cluster(1, 2, 1), with(51, VM{State: "ACTIVE", LCMState: "BOOT_FAILURE"}), Failed, []string{"VM 51 (worker) is BOOT_FAILURE"}},
		{"failed service and role", cluster(7, 2, 7), allDone, Failed, []string{"service is FAILED_DEPLOYING", "role worker is FAILED_DEPLOYING"}},
		{"undeploying", cluster(3, 3, 3), allDone, Failed, []string{"service is UNDEPLOYING"}},
		{"failure wins over progress", cluster(1, 2, 1), func() map[int]VM {
			m := with(50, VM{State: "FAILURE"})
			m[51] = VM{ID: 51, State: "ACTIVE", LCMState: "BOOT", Phase: ""}
			return m
		}(), Failed, []string{"VM 50 (worker) is FAILURE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Summarize(tc.svc, tc.vms)
			if r.Outcome != tc.outcome || !reflect.DeepEqual(r.Reasons, tc.reasons) {
				t.Errorf("outcome %s, reasons %q; want %s, %q", r.Outcome, r.Reasons, tc.outcome, tc.reasons)
			}
		})
	}
}

func TestSummarizeOrder(t *testing.T) {
	t.Parallel()
	svc := Service{ID: 1, Name: "k", State: 2, Roles: []Role{
		{Name: "worker", State: 2, Cardinality: 3, VMIDs: []int{60, 52, 55}},
		{Name: "master", State: 2, Cardinality: 1, VMIDs: []int{70}},
	}}
	r := Summarize(svc, map[int]VM{70: {ID: 70}, 60: {ID: 60}, 52: {ID: 52}, 55: {ID: 55}})
	var got []string
	for _, v := range r.VMs {
		got = append(got, v.Role+"/"+strconv.Itoa(v.ID))
	}
	want := []string{"master/70", "worker/52", "worker/55", "worker/60"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	if r.Roles[0].Name != "master" || r.Roles[1].VMs != 3 || r.Roles[1].State != "RUNNING" {
		t.Errorf("roles %+v", r.Roles)
	}
}
