package onegatesim

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/OpenNebula/one/src/oca/go/src/goca"
	"github.com/OpenNebula/one/src/oca/go/src/goca/parameters"
)

// The oned facade serves the same VMs as OneGate: a merge through
// one.vm.update is what GET /vm shows; updateconf resolves $UNAME and
// $USER[...] from the owner, whose template one.user.update changed;
// only the configured credentials get in.
func TestOnedFacade(t *testing.T) {
	h := newHarness(t, Options{})
	h.sim.SetOwner(5, "alice", map[string]string{"SSH_PUBLIC_KEY": "ssh-ed25519 AAAA"})
	h.instantiate(`{"name":"svc","deployment":"none","roles":[{"name":"master","type":"vm","template_id":1,"cardinality":1,
	  "template_contents":{"CONTEXT":{"WHO":"$UNAME","KEY":"$USER[SSH_PUBLIC_KEY]"}}}]}`, "")
	srv := httptest.NewServer(h.sim.OnedHandler("alice", "pw"))
	defer srv.Close()
	ctrl := goca.NewController(goca.NewClient(goca.NewConfig("alice", "pw", srv.URL), nil))
	ctx := context.Background()

	v, err := ctrl.VM(100).InfoContext(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if who, _ := v.Template.GetStrFromVec("CONTEXT", "WHO"); who != "alice" {
		t.Errorf("$UNAME resolved to %q", who)
	}
	if key, _ := v.Template.GetStrFromVec("CONTEXT", "KEY"); key != "ssh-ed25519 AAAA" {
		t.Errorf("$USER[SSH_PUBLIC_KEY] resolved to %q", key)
	}
	if err := ctrl.VM(100).UpdateContext(ctx, `K_1 = "a=b c"`, parameters.Merge); err != nil {
		t.Fatal(err)
	}
	if got := h.do(req{method: "GET", path: "/vm", vm: 100}); !strings.Contains(got.body, `"K_1":"a=b c"`) {
		t.Errorf("GET /vm after one.vm.update: %s", got.body)
	}
	if err := ctrl.VM(100).UpdateContext(ctx, `K_1 = "x"`, parameters.Replace); err == nil {
		t.Error("a replace was accepted")
	}
	if err := ctrl.User(5).UpdateContext(ctx, `ONEKUBE_AGE_RECIPIENT = "age1xyz"`, parameters.Merge); err != nil {
		t.Fatal(err)
	}
	if _, err := goca.NewClient(goca.NewConfig("alice", "pw", srv.URL), nil).CallContext(ctx, "one.vm.updateconf", 100,
		`CONTEXT = [ USERS = "$UNAME:$USER[ONEKUBE_AGE_RECIPIENT]" ]`, 1); err != nil {
		t.Fatal(err)
	}
	if got := h.sim.Context(100)["USERS"]; got != "alice:age1xyz" {
		t.Errorf("after updateconf: USERS=%q", got)
	}
	if got := h.sim.Context(100)["WHO"]; got != "alice" {
		t.Errorf("append mode dropped another key: WHO=%q", got)
	}
	bad := goca.NewController(goca.NewClient(goca.NewConfig("alice", "nope", srv.URL), nil))
	if _, err := bad.VM(100).InfoContext(ctx, false); err == nil || !strings.Contains(err.Error(), "authenticated") {
		t.Errorf("wrong password: %v", err)
	}

	flow := httptest.NewServer(h.sim.OneFlowHandler("alice", "pw"))
	defer flow.Close()
	r, _ := http.NewRequest(http.MethodGet, flow.URL+"/service/1", nil)
	r.SetBasicAuth("alice", "pw")
	res, err := http.DefaultClient.Do(r)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET /service/1: %v %v", res, err)
	}
	res.Body.Close()
	r.SetBasicAuth("alice", "nope")
	if res, err := http.DefaultClient.Do(r); err != nil || res.StatusCode != 401 {
		t.Errorf("wrong password: %v %v", res, err)
	}
}

// one.image.info serves a registered image as onekube-flow upgrade reads
// it (goca): its name, not persistent, its template's attributes.
func TestOnedImageInfo(t *testing.T) {
	h := newHarness(t, Options{})
	h.sim.SetOwner(5, "alice", nil)
	id := h.sim.CreateImage(Image{Name: "onekube-bundle-v1.37.2", Source: "/b.img", Template: map[string]string{"ONEKUBE_BUNDLE_VERSION": "v1.37.2"}})
	srv := httptest.NewServer(h.sim.OnedHandler("alice", "pw"))
	defer srv.Close()
	ctrl := goca.NewController(goca.NewClient(goca.NewConfig("alice", "pw", srv.URL), nil))
	img, err := ctrl.Image(id).InfoContext(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := img.Template.GetStr("ONEKUBE_BUNDLE_VERSION"); img.Name != "onekube-bundle-v1.37.2" || img.Persistent == nil || *img.Persistent != 0 || v != "v1.37.2" {
		t.Errorf("image %+v, version %q", img, v)
	}
	if _, err := ctrl.Image(id+1).InfoContext(context.Background(), false); err == nil {
		t.Error("an unknown image was served")
	}
}

// one.vm.info says the VM's state as oned keeps it: a powered-off VM is
// STATE 8 (POWEROFF), not ACTIVE/RUNNING, so onekube-flow's refusals see it.
func TestOnedVMInfoState(t *testing.T) {
	h := newHarness(t, Options{})
	h.sim.SetOwner(5, "alice", nil)
	h.instantiate(`{"name":"svc","deployment":"none","roles":[{"name":"master","type":"vm","template_id":1,"cardinality":1}]}`, "")
	srv := httptest.NewServer(h.sim.OnedHandler("alice", "pw"))
	defer srv.Close()
	ctrl := goca.NewController(goca.NewClient(goca.NewConfig("alice", "pw", srv.URL), nil))
	ctx := context.Background()
	state := func() string {
		t.Helper()
		v, err := ctrl.VM(100).InfoContext(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d/%d", v.StateRaw, v.LCMStateRaw)
	}
	if got := state(); got != "3/3" {
		t.Errorf("running VM: %s, want 3/3", got)
	}
	if err := h.sim.Act(100, "poweroff", true); err != nil {
		t.Fatal(err)
	}
	if got := state(); got != "8/0" {
		t.Errorf("powered-off VM: %s, want 8/0 (POWEROFF, LCM_INIT)", got)
	}
}
