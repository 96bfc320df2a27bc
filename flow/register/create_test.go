package register

import (
	"context"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow"
	"github.com/onekube/onekube/flow/register/registertest"
)

// update is declared so `go test ./flow/... -run Golden -update` works for
// every package under flow/; this one has no golden files.
var _ = flag.Bool("update", false, "rewrite golden files")

const (
	user = "oneadmin"
	pass = "s3cret-pass"
)

func registrar(t *testing.T, f *registertest.OneFlow, o *registertest.Oned) Registrar {
	flowURL, onedURL := servers(t, f, o)
	hc := &http.Client{Timeout: 10 * time.Second}
	return Registrar{
		VM:   NewOnedTemplates(onedURL, user, vmcontext.NewSecret(pass), hc),
		Flow: &FlowClient{BaseURL: flowURL, User: user, Password: vmcontext.NewSecret(pass), HTTP: hc},
	}
}

func withIDs(spec flow.Spec, master, worker int) flow.Spec {
	spec.Master.TemplateID, spec.Worker.TemplateID = &master, &worker
	return spec
}

func TestCreateFresh(t *testing.T) {
	t.Parallel()
	for _, v := range []flow.OneFlowVersion{flow.Version6, flow.Version7} {
		t.Run(v.String(), func(t *testing.T) {
			f := &registertest.OneFlow{Pool: `{"DOCUMENT_POOL":{}}`, CreateID: 7}
			o := &registertest.Oned{Pool: registertest.VMPool(registertest.VMTemplate{ID: 3, Name: "other"}), NextID: 40}
			spec := flow.DefaultSpec()
			out, err := registrar(t, f, o).Create(context.Background(), spec, Options{Version: v})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{
				"vm-template master 40 created (kubernetes-master)",
				"vm-template worker 41 created (kubernetes-worker)",
				"service-template 7 created (kubernetes)",
			}
			if got := strings.Join(outcomes(out), "\n"); got != strings.Join(want, "\n") {
				t.Errorf("outcomes:\n%s", got)
			}
			// oned: list own templates, then allocate the rendered text.
			masterText, _ := flow.RenderVMTemplate(spec, flow.RoleMaster)
			workerText, _ := flow.RenderVMTemplate(spec, flow.RoleWorker)
			wantCalls := []registertest.RPCCall{
				{Method: "one.user.info", Params: []string{user + ":" + pass, "-1", "bool:0"}},
				{Method: "one.templatepool.info", Params: []string{user + ":" + pass, "-3", "-1", "-1"}},
				{Method: "one.template.allocate", Params: []string{user + ":" + pass, masterText}},
				{Method: "one.template.allocate", Params: []string{user + ":" + pass, workerText}},
			}
			if !slices.EqualFunc(o.Calls, wantCalls, func(a, b registertest.RPCCall) bool { return a.Method == b.Method && slices.Equal(a.Params, b.Params) }) {
				t.Errorf("oned calls:\n%q\nwant\n%q", o.Calls, wantCalls)
			}
			// OneFlow: the pool, then POST of our JSON with the new IDs.
			body, _ := flow.RenderService(withIDs(spec, 40, 41), v)
			wantReqs := []registertest.FlowRequest{
				{Method: "GET", Path: "/service_template", User: user, Password: pass},
				{Method: "POST", Path: "/service_template", User: user, Password: pass, ContentType: "application/json", Body: string(body)},
			}
			if !slices.Equal(f.Requests, wantReqs) {
				t.Errorf("oneflow requests:\n%+v\nwant\n%+v", f.Requests, wantReqs)
			}
		})
	}
}

func TestCreateExistingRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		flow    string
		oned    string
		wantMsg string
	}{
		{"service exists", `{"DOCUMENT_POOL":{"DOCUMENT":{"ID":"7","UID":"0","NAME":"kubernetes"}}}`, registertest.VMPool(),
			`already exists: service template "kubernetes" (ID 7); pass --replace`},
		{"vm template exists", `{"DOCUMENT_POOL":{"DOCUMENT":[{"ID":"2","UID":"0","NAME":"other"}]}}`, registertest.VMPool(registertest.VMTemplate{ID: 12, Name: "kubernetes-worker"}),
			`already exists: VM template "kubernetes-worker" (ID 12, role worker); pass --replace`},
		{"ambiguous", `{"DOCUMENT_POOL":{}}`, registertest.VMPool(registertest.VMTemplate{ID: 12, Name: "kubernetes-worker"}, registertest.VMTemplate{ID: 13, Name: "kubernetes-worker"}),
			`12 and 13 are both VM templates named "kubernetes-worker"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &registertest.OneFlow{Pool: tc.flow}
			o := &registertest.Oned{Pool: tc.oned}
			_, err := registrar(t, f, o).Create(context.Background(), flow.DefaultSpec(), Options{Version: flow.Version7})
			if err == nil || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("err = %v, want %q", err, tc.wantMsg)
			}
			if len(f.Writes()) != 0 || slices.Contains(o.Methods(), "one.template.allocate") || slices.Contains(o.Methods(), "one.template.update") {
				t.Errorf("wrote despite refusing: %v %v", f.Writes(), o.Methods())
			}
		})
	}
}

func TestCreateReplace(t *testing.T) {
	t.Parallel()
	f := &registertest.OneFlow{Pool: `{"DOCUMENT_POOL":{"DOCUMENT":[{"ID":"5","UID":"0","NAME":"x"},{"ID":"7","UID":"0","NAME":"kubernetes"}]}}`}
	o := &registertest.Oned{Pool: registertest.VMPool(registertest.VMTemplate{ID: 12, Name: "kubernetes-worker"}, registertest.VMTemplate{ID: 11, Name: "kubernetes-master"})}
	spec := flow.DefaultSpec()
	out, err := registrar(t, f, o).Create(context.Background(), spec, Options{Version: flow.Version7, Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(outcomes(out), "; "); got != "vm-template master 11 updated (kubernetes-master); vm-template worker 12 updated (kubernetes-worker); service-template 7 updated (kubernetes)" {
		t.Errorf("outcomes: %s", got)
	}
	masterText, _ := flow.RenderVMTemplate(spec, flow.RoleMaster)
	if c := o.Calls[2]; c.Method != "one.template.update" || !slices.Equal(c.Params, []string{user + ":" + pass, "11", masterText, "0"}) {
		t.Errorf("update call %q", c)
	}
	body, _ := flow.RenderService(withIDs(spec, 11, 12), flow.Version7)
	if w := f.Writes(); len(w) != 1 || w[0].Method != "PUT" || w[0].Path != "/service_template/7" || w[0].Body != string(body) {
		t.Errorf("writes: %+v", w)
	}
}

func TestCreateReuseAndGiven(t *testing.T) {
	t.Parallel()
	f := &registertest.OneFlow{Pool: `{"DOCUMENT_POOL":{}}`, CreateID: 3}
	o := &registertest.Oned{Pool: registertest.VMPool(registertest.VMTemplate{ID: 12, Name: "kubernetes-worker"}), NextID: 20}
	out, err := registrar(t, f, o).Create(context.Background(), flow.DefaultSpec(), Options{Version: flow.Version7, ReuseVMTemplates: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(outcomes(out), "; "); got != "vm-template master 20 created (kubernetes-master); vm-template worker 12 reused (kubernetes-worker); service-template 3 created (kubernetes)" {
		t.Errorf("outcomes: %s", got)
	}

	// IDs in the spec: oned is only asked who the caller is, to find the
	// caller's own service template.
	f2 := &registertest.OneFlow{Pool: `{"DOCUMENT_POOL":{}}`, CreateID: 4}
	o2 := &registertest.Oned{}
	spec := withIDs(flow.DefaultSpec(), 0, 9)
	out, err = registrar(t, f2, o2).Create(context.Background(), spec, Options{Version: flow.Version6})
	if err != nil {
		t.Fatal(err)
	}
	if m := o2.Methods(); !slices.Equal(m, []string{"one.user.info"}) {
		t.Errorf("oned called: %v", m)
	}
	body, _ := flow.RenderService(spec, flow.Version6)
	if w := f2.Writes(); len(w) != 1 || w[0].Body != string(body) || !strings.Contains(w[0].Body, `"vm_template": 0`) {
		t.Errorf("writes: %+v", w)
	}
	if got := strings.Join(outcomes(out), "; "); got != "vm-template master 0 given (); vm-template worker 9 given (); service-template 4 created (kubernetes)" {
		t.Errorf("outcomes: %s", got)
	}
}

func TestCreateSharedVMTemplate(t *testing.T) {
	t.Parallel()
	f := &registertest.OneFlow{Pool: `{"DOCUMENT_POOL":{}}`}
	o := &registertest.Oned{Pool: registertest.VMPool(), NextID: 5}
	spec := flow.DefaultSpec()
	spec.Master.TemplateName, spec.Worker.TemplateName = "k8s-node", "k8s-node"
	out, err := registrar(t, f, o).Create(context.Background(), spec, Options{Version: flow.Version7})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(strings.Join(o.Methods(), " "), "allocate"); n != 1 || out[1].ID != 5 || out[1].Action != Reused {
		t.Errorf("allocations %d, outcomes %v", n, outcomes(out))
	}
}

func TestCreateErrorsVerbatim(t *testing.T) {
	t.Parallel()
	msg := "Role 'worker' has an invalid attribute. Password " + pass + " rejected"
	f := &registertest.OneFlow{Pool: `{"DOCUMENT_POOL":{}}`, Fail: msg}
	o := &registertest.Oned{}
	_, err := registrar(t, f, o).Create(context.Background(), withIDs(flow.DefaultSpec(), 1, 2), Options{Version: flow.Version7})
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != "400 Bad Request" {
		t.Fatalf("err = %v", err)
	}
	want := "oneflow: POST /service_template: 400 Bad Request: Role 'worker' has an invalid attribute. Password <redacted> rejected"
	if err.Error() != want {
		t.Errorf("err = %q\nwant  %q", err, want)
	}

	o2 := &registertest.Oned{FailWith: "[one.templatepool.info] User couldn't be authenticated"}
	_, err = registrar(t, &registertest.OneFlow{Pool: `{}`}, o2).Create(context.Background(), flow.DefaultSpec(), Options{Version: flow.Version7})
	if err == nil || !strings.Contains(err.Error(), "User couldn't be authenticated") {
		t.Errorf("err = %v", err)
	}

	spec := flow.DefaultSpec()
	spec.Master.Count = ptr(2)
	if _, err := registrar(t, &registertest.OneFlow{}, &registertest.Oned{}).Create(context.Background(), spec, Options{Version: flow.Version7}); !errors.Is(err, flow.ErrSpec) {
		t.Errorf("bad spec: %v", err)
	}
}

func TestFlowClientList(t *testing.T) {
	t.Parallel()
	for pool, want := range map[string]string{
		`{"DOCUMENT_POOL":{}}`: "",
		`{"DOCUMENT_POOL":{"DOCUMENT":{"ID":"3","UID":"0","NAME":"a"}}}`:                       "3:a",
		`{"DOCUMENT_POOL":{"DOCUMENT":[{"ID":"3","UID":"0","NAME":"a"},{"ID":4,"NAME":"b"}]}}`: "3:a 4:b",
	} {
		f := &registertest.OneFlow{Pool: pool}
		url, _ := servers(t, f, &registertest.Oned{})
		docs, err := (&FlowClient{BaseURL: url, HTTP: http.DefaultClient}).List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range docs {
			got = append(got, strconv.Itoa(d.ID)+":"+d.Name)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s: %v", pool, got)
		}
	}
	f := &registertest.OneFlow{Pool: `{"DOCUMENT_POOL":{"DOCUMENT":{"ID":"x"}}}`}
	url, _ := servers(t, f, &registertest.Oned{})
	if _, err := (&FlowClient{BaseURL: url, HTTP: http.DefaultClient}).List(context.Background()); err == nil {
		t.Error("bad ID accepted")
	}
}

func servers(t *testing.T, flow *registertest.OneFlow, oned *registertest.Oned) (flowURL, onedURL string) {
	fs := httptest.NewServer(flow)
	t.Cleanup(fs.Close)
	os := httptest.NewServer(oned)
	t.Cleanup(os.Close)
	t.Cleanup(func() {
		if len(oned.Bad) > 0 {
			t.Errorf("fake oned: %v", oned.Bad)
		}
	})
	return fs.URL, os.URL + "/RPC2"
}

func outcomes(out []Outcome) []string {
	var s []string
	for _, o := range out {
		s = append(s, o.String())
	}
	return s
}

func ptr[T any](v T) *T { return &v }
