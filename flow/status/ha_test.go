package status

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// haReport: 3 masters after the initialiser (49) was recreated and
// rejoined, a fourth member left stale, the acting master 53 publishing.
func haReport() Report {
	svc := Service{ID: 12, Name: "kubernetes", State: 2, Roles: []Role{
		{Name: "master", State: 2, Cardinality: 3, VMIDs: []int{49, 53, 54}},
		{Name: "worker", State: 2, Cardinality: 1, VMIDs: []int{55}},
	}}
	m := func(id int, ip, kind, serve, etcd string) VM {
		return VM{ID: id, Name: "master", State: "ACTIVE", LCMState: "RUNNING", IP: ip, Phase: "done", Ready: true,
			NodeName: "master-" + ip[len(ip)-1:], Master: ip + ":6443",
			CP: ControlPlaneInfo{Kind: kind, Endpoint: "127.0.0.1:6444", Serve: serve, Etcd: etcd}}
	}
	etcd := "voter@10.0.0.5 voter@10.0.0.8 unhealthy@10.0.0.9 voter@10.0.0.7"
	vms := map[int]VM{
		49: m(49, "10.0.0.5", "control-plane", "standby", "voter@10.0.0.5 stale@10.0.0.1"),
		53: m(53, "10.0.0.8", "init", "acting", etcd),
		54: m(54, "10.0.0.7", "control-plane", "standby", ""),
		55: {ID: 55, Name: "worker", State: "ACTIVE", LCMState: "RUNNING", IP: "10.0.0.6", Phase: "done", Ready: true, NodeName: "worker-55"},
	}
	for id, c := range map[int][2]string{
		49: {"expires=2028-01-01T00:00:00Z renewed=2027-12-02T03:00:00Z", ""},
		53: {"expires=2027-01-20T00:00:00Z renewed=never", "kubeadm certs renew all: exit status 1: open /etc/kubernetes/pki/ca.key: no such file"},
	} {
		v := vms[id]
		v.CP.Certs, v.CP.CertsError = c[0], c[1]
		vms[id] = v
	}
	return SummarizeAt(svc, vms, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
}

func TestGoldenHA(t *testing.T) {
	t.Parallel()
	r := haReport()
	var table, js bytes.Buffer
	if err := WriteTable(&table, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "ha.txt", table.Bytes())
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "ha.json", js.Bytes())
	cp := r.ControlPlane
	if cp == nil || cp.InitialisedBy != 53 || cp.ActingVM != 53 || len(cp.Members) != 4 {
		t.Fatalf("control plane %+v", cp)
	}
	if !strings.Contains(table.String(), "VM 53 CANNOT RENEW ITS CERTIFICATES: kubeadm certs renew all") {
		t.Errorf("certificate error not shown:\n%s", table.String())
	}
	if !strings.Contains(table.String(), "VM 49 master-5: control-plane, etcd voter, certificates expires=2028-01-01T00:00:00Z renewed=2027-12-02T03:00:00Z") {
		t.Errorf("certificate expiry not shown:\n%s", table.String())
	}
	if r.Outcome != Failed || !strings.Contains(table.String(), "failed: VM 53 (master) cannot renew its certificates: kubeadm certs renew all") {
		t.Errorf("a master that cannot renew does not fail the report:\n%s", table.String())
	}
	if !strings.Contains(table.String(), "etcd member at 10.0.0.9 (unhealthy) belongs to no master VM: stale") {
		t.Errorf("stale member not shown:\n%s", table.String())
	}
}

// Without HA fields (an older agent) the report has no control-plane part.
func TestNoControlPlaneFromOldAgents(t *testing.T) {
	t.Parallel()
	for name, r := range sampleReports() {
		if name != "empty" && r.ControlPlane != nil && r.ControlPlane.Endpoint != "" {
			t.Errorf("%s: %+v", name, r.ControlPlane)
		}
	}
}
