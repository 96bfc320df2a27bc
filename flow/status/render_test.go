package status

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update after checking):\n%s", name, got)
	}
}

// sampleReports are the views an operator meets: mid-deploy, failed, ready.
func sampleReports() map[string]Report {
	svc := Service{ID: 12, Name: "kubernetes", State: 1, Roles: []Role{
		{Name: "worker", State: 1, Cardinality: 3, VMIDs: []int{51, 50, 52}},
		{Name: "master", State: 2, Cardinality: 1, VMIDs: []int{49}},
	}}
	master := VM{ID: 49, Name: "master_0_(service_12)", State: "ACTIVE", LCMState: "RUNNING", IP: "10.0.0.5",
		Phase: "done", Ready: true, NodeName: "k8s-master", Master: "10.0.0.5:6443", TokenPublished: true}
	progress := map[int]VM{
		49: master,
		50: {ID: 50, Name: "worker_0_(service_12)", State: "ACTIVE", LCMState: "RUNNING", IP: "10.0.0.6", Phase: "kubeadm-join", NodeName: "k8s-worker-0"},
		51: {ID: 51, Name: "worker_1_(service_12)", State: "ACTIVE", LCMState: "BOOT", IP: "10.0.0.7"},
		52: {ID: 52, ReadError: "oned: reading VM 52: context deadline exceeded"},
	}
	failed := map[int]VM{
		49: master,
		50: {ID: 50, Name: "worker_0_(service_12)", State: "ACTIVE", LCMState: "RUNNING", IP: "10.0.0.6", Phase: "failed", NodeName: "k8s-worker-0",
			Error: "kubeadm join: [preflight] Some fatal errors occurred:\n\t[ERROR Port-10250]: Port 10250 is in use\x1b[31m"},
		51: {ID: 51, Name: "worker_1_(service_12)", State: "ACTIVE", LCMState: "BOOT_FAILURE", IP: "10.0.0.7"},
		52: {ID: 52, Name: "worker_2_(service_12)", State: "PENDING", LCMState: "LCM_INIT"},
	}
	ready := map[int]VM{49: master}
	for i, id := range []int{50, 51, 52} {
		ready[id] = VM{ID: id, Name: "worker", State: "ACTIVE", LCMState: "RUNNING", IP: "10.0.0." + string(rune('6'+i)),
			Phase: "done", Ready: true, NodeName: "k8s-worker-" + string(rune('0'+i))}
	}
	readySvc := svc
	readySvc.State = 2
	readySvc.Roles = []Role{{Name: "worker", State: 2, Cardinality: 3, VMIDs: []int{51, 50, 52}}, {Name: "master", State: 2, Cardinality: 1, VMIDs: []int{49}}}
	failedSvc := svc
	failedSvc.State = 7
	return map[string]Report{
		"progress": Summarize(svc, progress),
		"failed":   Summarize(failedSvc, failed),
		"ready":    Summarize(readySvc, ready),
		"empty":    Summarize(Service{ID: 3, Name: "new", State: 0}, nil),
	}
}

func TestGolden(t *testing.T) {
	t.Parallel()
	for name, r := range sampleReports() {
		var table, js bytes.Buffer
		if err := WriteTable(&table, r); err != nil {
			t.Fatal(err)
		}
		golden(t, name+".txt", table.Bytes())
		if err := WriteJSON(&js, r); err != nil {
			t.Fatal(err)
		}
		golden(t, name+".json", js.Bytes())
		var back map[string]any
		if err := json.Unmarshal(js.Bytes(), &back); err != nil || back["version"] != float64(JSONVersion) {
			t.Errorf("%s: JSON does not read back: %v", name, err)
		}
		if bytes.ContainsAny(table.Bytes(), "\x1b\t\r") {
			t.Errorf("%s: control characters reach the table", name)
		}
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven char", 10, "eleven ch…"},
		{"ääääää", 3, "ää…"},
	} {
		if got := truncate(tc.in, tc.n); got != tc.want {
			t.Errorf("truncate(%q, %d) = %q", tc.in, tc.n, got)
		}
	}
	if got := cell(" a\n\tb\x1b[0m "); got != "a b[0m" {
		t.Errorf("cell = %q", got)
	}
	if got := cell(""); got != "-" {
		t.Errorf("empty cell = %q", got)
	}
}
