package onegate_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
	"github.com/onekube/onekube/context/onegatesim"
)

// The body is what onegate-server.rb perform_action reads; params go to
// OCA as `hard` or the name, so "params" must be absent for a soft action.
func TestActionBody(t *testing.T) {
	t.Parallel()
	cases := []struct {
		perform string
		params  map[string]string
		want    string // "" : refused with ErrInvalid
	}{
		{"terminate", nil, `{"action":{"perform":"terminate"}}`},
		{"terminate", map[string]string{}, `{"action":{"perform":"terminate"}}`},
		{"terminate", map[string]string{"hard": "false"}, `{"action":{"perform":"terminate"}}`},
		{"terminate", map[string]string{"hard": "true"}, `{"action":{"params":true,"perform":"terminate"}}`},
		{"terminate-hard", nil, `{"action":{"params":true,"perform":"terminate"}}`},
		{"terminate-hard", map[string]string{"hard": "true"}, `{"action":{"params":true,"perform":"terminate"}}`},
		{"terminate-hard", map[string]string{"hard": "false"}, ""},
		{"poweroff", nil, `{"action":{"perform":"poweroff"}}`},
		{"poweroff-hard", nil, `{"action":{"params":true,"perform":"poweroff"}}`},
		{"undeploy-hard", nil, `{"action":{"params":true,"perform":"undeploy"}}`},
		{"resume", nil, `{"action":{"perform":"resume"}}`},
		{"resume", map[string]string{"hard": "true"}, ""},
		{"rename", map[string]string{"name": "onekube-worker-3"}, `{"action":{"params":"onekube-worker-3","perform":"rename"}}`},
		{"rename", nil, ""},
		{"rename", map[string]string{"name": ""}, ""},
		{"rename", map[string]string{"name": "a;b"}, ""},
		{"rename", map[string]string{"name": strings.Repeat("a", 129)}, ""},
		{"rename", map[string]string{"name": "x", "hard": "true"}, ""},
		{"terminate", map[string]string{"hard": "yes"}, ""},
		{"terminate", map[string]string{"force": "true"}, ""},
		// attachdisk: the template String bare; detachdisk: the DISK_ID
		// as a JSON integer (one.vm.attach / one.vm.detach).
		{"attachdisk", map[string]string{"disk_template": "DISK=[IMAGE_ID=118]"}, `{"action":{"params":"DISK=[IMAGE_ID=118]","perform":"attachdisk"}}`},
		{"attachdisk", map[string]string{"disk_template": " DISK = [ IMAGE_ID = 7, DEV_PREFIX = \"vd\" ] "}, `{"action":{"params":"DISK = [ IMAGE_ID = 7, DEV_PREFIX = \"vd\" ]","perform":"attachdisk"}}`},
		{"attachdisk", nil, ""},
		{"attachdisk", map[string]string{"disk_template": ""}, ""},
		{"attachdisk", map[string]string{"disk_template": "IMAGE_ID=118"}, ""},
		{"attachdisk", map[string]string{"disk_template": "DISK=[]"}, ""},
		{"attachdisk", map[string]string{"disk_template": "DISK=[IMAGE_ID=1] NIC=[NETWORK_ID=0]"}, ""},
		{"attachdisk", map[string]string{"disk_template": "DISK=[IMAGE_ID=1]", "hard": "true"}, ""},
		{"attachdisk", map[string]string{"disk_id": "3"}, ""},
		{"detachdisk", map[string]string{"disk_id": "3"}, `{"action":{"params":3,"perform":"detachdisk"}}`},
		{"detachdisk", map[string]string{"disk_id": "0"}, `{"action":{"params":0,"perform":"detachdisk"}}`},
		{"detachdisk", nil, ""},
		{"detachdisk", map[string]string{"disk_id": "-1"}, ""},
		{"detachdisk", map[string]string{"disk_id": "+3"}, ""},
		{"detachdisk", map[string]string{"disk_id": "3.0"}, ""},
		{"detachdisk", map[string]string{"disk_id": "vdb"}, ""},
		{"detachdisk", map[string]string{"disk_template": "DISK=[IMAGE_ID=1]"}, ""},
		{"attachdisk-hard", nil, ""},
		{"reboot", nil, ""}, // refused by OneGate's default :restricted_actions:
		{"resume-hard", nil, ""},
		{"Terminate", nil, ""},
		{"", nil, ""},
	}
	for _, c := range cases {
		got, err := onegate.ActionBody(c.perform, c.params)
		if c.want == "" {
			if !errors.Is(err, onegate.ErrInvalid) {
				t.Errorf("ActionBody(%q, %v) = %q, %v; want ErrInvalid", c.perform, c.params, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ActionBody(%q, %v) = %q, %v; want %q", c.perform, c.params, got, err, c.want)
		}
	}
}

// Action posts the body to /vms/:id/action as JSON and maps the refusals.
func TestActionRequest(t *testing.T) {
	t.Parallel()
	var got struct{ method, path, ctype, body string }
	status, reply := http.StatusNoContent, ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := new(strings.Builder)
		_, _ = io.Copy(b, r.Body)
		got.method, got.path, got.ctype, got.body = r.Method, r.URL.Path, r.Header.Get("Content-Type"), b.String()
		w.WriteHeader(status)
		_, _ = w.Write([]byte(reply))
	}))
	defer srv.Close()
	c, err := onegate.New(onegate.Config{Endpoint: srv.URL, VMID: 7, Token: vmcontext.NewSecret("tok"), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Action(ctx, 12, "poweroff-hard", nil); err != nil {
		t.Fatal(err)
	}
	if got.method != "POST" || got.path != "/vms/12/action" || got.ctype != "application/json" || got.body != `{"action":{"params":true,"perform":"poweroff"}}` {
		t.Errorf("request %+v", got)
	}
	got.path = ""
	if err := c.Action(ctx, -1, "terminate", nil); !errors.Is(err, onegate.ErrInvalid) || got.path != "" {
		t.Errorf("negative VM ID: %v (sent: %q)", err, got.path)
	}
	if err := c.Action(ctx, 12, "reboot", nil); !errors.Is(err, onegate.ErrInvalid) || got.path != "" {
		t.Errorf("reboot: %v (sent: %q)", err, got.path)
	}
	status, reply = http.StatusInternalServerError, "Internal server error"
	err = c.Action(ctx, 12, "resume", nil)
	var oe *onegate.Error
	if !errors.As(err, &oe) || oe.Status != 500 || !strings.Contains(err.Error(), "POST /vms/12/action") {
		t.Errorf("refused resume: %v", err)
	}
}

// Against the simulator, each action does to the VM what oned does, and
// OneFlow reacts: a powered-off worker puts the service in WARNING, where
// ScaleRole is refused; a terminated one leaves the role.
func TestActionAgainstSimulator(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sim, sid := simCluster(t, "7.4")
	master := sim.RoleVMs(sid, "master")[0]
	mc := clientFor(t, master)
	if err := mc.Action(ctx, master.ID, onegate.ActionRename, map[string]string{onegate.ParamName: "onekube-master-0"}); err != nil {
		t.Fatal(err)
	}
	if me, err := mc.GetVM(ctx); err != nil || me.Name != "onekube-master-0" {
		t.Fatalf("after rename: %+v, %v", me, err)
	}
	if err := mc.UpdateVM(ctx, onegate.KV{Key: "READY", Value: "YES"}); err != nil {
		t.Fatal(err)
	}
	if err := sim.WaitRoleVMs(ctx, sid, "worker", 2); err != nil {
		t.Fatal(err)
	}
	w := sim.RoleVMs(sid, "worker")
	for _, v := range w {
		if err := clientFor(t, v).UpdateVM(ctx, onegate.KV{Key: "READY", Value: "YES"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := sim.WaitServiceRunning(ctx); err != nil {
		t.Fatal(err)
	}
	if err := mc.Action(ctx, w[1].ID, onegate.ActionPoweroffHard, nil); err != nil {
		t.Fatal(err)
	}
	if s, v := sim.ServiceState(sid), sim.VMState(w[1].ID); s != "WARNING" || v != "POWEROFF" {
		t.Errorf("after poweroff-hard: service %s, VM %s", s, v)
	}
	if err := mc.ScaleRole(ctx, "worker", 3); !onegate.IsBadRequest(err) {
		t.Errorf("scale in WARNING = %v, want a 400", err)
	}
	if err := mc.Action(ctx, w[1].ID, onegate.ActionResume, nil); err != nil {
		t.Fatal(err)
	}
	if err := mc.Action(ctx, w[1].ID, onegate.ActionResume, nil); err == nil {
		t.Error("resume of a RUNNING VM accepted")
	}
	if err := mc.Action(ctx, w[0].ID, onegate.ActionTerminateHard, nil); err != nil {
		t.Fatal(err)
	}
	svc, err := mc.GetService(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r := svc.Role("worker"); r == nil || r.Cardinality != 1 || len(r.Nodes) != 1 || r.Nodes[0].VMID != w[1].ID || svc.State != 2 {
		t.Errorf("after terminate-hard: %+v", svc)
	}
}

// attachdisk and detachdisk through the real client reach the simulator's
// oned as a template String and an Integer: the disk appears in the
// extended service document, and goes.
func TestActionDiskAgainstSimulator(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sim, sid := simCluster(t, "7.4")
	master := sim.RoleVMs(sid, "master")[0]
	mc := clientFor(t, master)
	img := sim.CreateImage(onegatesim.Image{Name: "bundle", Source: "/nonexistent"})
	if err := mc.Action(ctx, master.ID, onegate.ActionAttachDisk, map[string]string{onegate.ParamDiskTemplate: fmt.Sprintf("DISK=[IMAGE_ID=%d]", img)}); err != nil {
		t.Fatal(err)
	}
	disks := sim.Disks(master.ID)
	if len(disks) != 1 || disks[0].ImageID != img {
		t.Fatalf("after attachdisk: %+v", disks)
	}
	if err := mc.Action(ctx, master.ID, onegate.ActionDetachDisk, map[string]string{onegate.ParamDiskID: strconv.Itoa(disks[0].DiskID)}); err != nil {
		t.Fatal(err)
	}
	if d := sim.Disks(master.ID); len(d) != 0 {
		t.Fatalf("after detachdisk: %+v", d)
	}
}
