package register

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow/register/registertest"
)

func TestServicesAndVMs(t *testing.T) {
	t.Parallel()
	f := &registertest.OneFlow{
		Services: `{"DOCUMENT_POOL":{"DOCUMENT":[{"ID":"4","UID":"0","UNAME":"oneadmin","NAME":"a"},{"ID":"5","NAME":"b"}]}}`,
		Service:  map[int]string{4: `{"DOCUMENT":{"ID":"4"}}`},
	}
	o := &registertest.Oned{VMs: map[int]string{7: registertest.VMXML(registertest.VM{ID: 7, Name: "x<y", State: 3, LCM: 3, IP: "10.0.0.7",
		UserTemplate: map[string]string{"READY": "YES"}})}}
	flowURL, onedURL := servers(t, f, o)
	hc := &http.Client{Timeout: 10 * time.Second}
	fc := &FlowClient{BaseURL: flowURL, User: user, Password: vmcontext.NewSecret(pass), HTTP: hc}
	ctx := context.Background()

	docs, err := fc.Services(ctx)
	if err != nil || !slices.Equal(docs, []Document{{4, "a", 0, "oneadmin"}, {5, "b", -1, ""}}) {
		t.Errorf("Services: %v, %v", docs, err)
	}
	b, err := fc.Service(ctx, 4)
	if err != nil || string(b) != `{"DOCUMENT":{"ID":"4"}}` {
		t.Errorf("Service: %s, %v", b, err)
	}
	if _, err := fc.Service(ctx, 5); err == nil || !strings.Contains(err.Error(), "GET /service/5: 404 Not Found: Error getting document [5].") {
		t.Errorf("Service 5: %v", err)
	}
	wantReqs := []registertest.FlowRequest{
		{Method: "GET", Path: "/service", User: user, Password: pass},
		{Method: "GET", Path: "/service/4", User: user, Password: pass},
		{Method: "GET", Path: "/service/5", User: user, Password: pass},
	}
	if !slices.Equal(f.Requests, wantReqs) {
		t.Errorf("requests %+v", f.Requests)
	}

	vms := NewOnedVMs(onedURL, user, vmcontext.NewSecret(pass), hc)
	v, err := vms.Info(ctx, 7)
	if err != nil || v.ID != 7 || v.Name != "x<y" || v.StateRaw != 3 || v.LCMStateRaw != 3 {
		t.Fatalf("Info: %+v, %v", v, err)
	}
	if r, _ := v.UserTemplate.GetStr("READY"); r != "YES" {
		t.Errorf("READY %q", r)
	}
	if _, err := vms.Info(ctx, 8); err == nil || !strings.Contains(err.Error(), "oned: reading VM 8:") || strings.Contains(err.Error(), pass) {
		t.Errorf("Info 8: %v", err)
	}
	want := []registertest.RPCCall{
		{Method: "one.vm.info", Params: []string{user + ":" + pass, "7", "bool:0"}},
		{Method: "one.vm.info", Params: []string{user + ":" + pass, "8", "bool:0"}},
	}
	if !slices.EqualFunc(o.Calls, want, func(a, b registertest.RPCCall) bool { return a.Method == b.Method && slices.Equal(a.Params, b.Params) }) {
		t.Errorf("oned calls %q", o.Calls)
	}
}
