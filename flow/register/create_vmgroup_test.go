package register

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow"
	"github.com/onekube/onekube/flow/register/registertest"
)

func groupRegistrar(t *testing.T, f *registertest.OneFlow, o *registertest.Oned) Registrar {
	r := registrar(t, f, o)
	_, onedURL := servers(t, &registertest.OneFlow{}, o)
	r.Groups = NewOnedVMGroups(onedURL, user, vmcontext.NewSecret(pass), &http.Client{Timeout: 10 * time.Second})
	return r
}

func haSpec() flow.Spec {
	s := flow.DefaultSpec()
	s.Master.Count = ptr(3)
	return s
}

func TestCreateVMGroup(t *testing.T) {
	t.Parallel()
	spec := haSpec()
	groupText, _ := flow.RenderVMGroup(spec)
	cases := []struct {
		name    string
		spec    flow.Spec
		groups  string
		want    []string
		methods string
		wantErr string
	}{
		{name: "created", spec: spec,
			groups: registertest.VMGroupPool(registertest.VMGroup{ID: 2, Name: "kubernetes-anti-affinity", UID: 9, Roles: map[string]string{"master": "ANTI_AFFINED"}}),
			want: []string{"vm-group 40 created (kubernetes-anti-affinity)", "vm-template master 41 created (kubernetes-master)",
				"vm-template worker 42 created (kubernetes-worker)", "service-template 7 created (kubernetes)"},
			methods: "one.user.info one.templatepool.info one.vmgrouppool.info one.vmgroup.allocate one.template.allocate one.template.allocate"},
		{name: "reused", spec: spec,
			groups: registertest.VMGroupPool(registertest.VMGroup{ID: 2, Name: "kubernetes-anti-affinity", Roles: map[string]string{"master": "anti_affined", "db": "AFFINED"}}),
			want: []string{"vm-group 2 reused (kubernetes-anti-affinity)", "vm-template master 40 created (kubernetes-master)",
				"vm-template worker 41 created (kubernetes-worker)", "service-template 7 created (kubernetes)"},
			methods: "one.user.info one.templatepool.info one.vmgrouppool.info one.template.allocate one.template.allocate"},
		{name: "lacks the worker role", spec: func() flow.Spec { s := haSpec(); s.Worker.AntiAffinity = ptr(true); return s }(),
			groups:  registertest.VMGroupPool(registertest.VMGroup{ID: 2, Name: "kubernetes-anti-affinity", Roles: map[string]string{"master": "ANTI_AFFINED", "worker": "NONE"}}),
			wantErr: `VM group "kubernetes-anti-affinity" (ID 2) has no ANTI_AFFINED role worker`,
			methods: "one.user.info one.templatepool.info one.vmgrouppool.info"},
		{name: "one master: no group", spec: flow.DefaultSpec(),
			want: []string{"vm-template master 40 created (kubernetes-master)",
				"vm-template worker 41 created (kubernetes-worker)", "service-template 7 created (kubernetes)"},
			methods: "one.user.info one.templatepool.info one.template.allocate one.template.allocate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := &registertest.OneFlow{Pool: `{"DOCUMENT_POOL":{}}`, CreateID: 7}
			o := &registertest.Oned{NextID: 40, Groups: c.groups}
			out, err := groupRegistrar(t, f, o).Create(context.Background(), c.spec, Options{Version: flow.Version7})
			if c.wantErr != "" {
				if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), c.wantErr) || len(f.Writes()) != 0 {
					t.Errorf("err = %v, writes %v", err, f.Writes())
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(outcomes(out), "\n"); got != strings.Join(c.want, "\n") {
				t.Errorf("outcomes:\n%s\nwant\n%s", got, strings.Join(c.want, "\n"))
			}
			if got := strings.Join(o.Methods(), " "); got != c.methods {
				t.Errorf("oned methods %s\nwant %s", got, c.methods)
			}
			for _, call := range o.Calls {
				if call.Method == "one.vmgroup.allocate" && call.Params[1] != groupText {
					t.Errorf("VM group text:\n%s\nwant\n%s", call.Params[1], groupText)
				}
				if call.Method == "one.vmgrouppool.info" && call.Params[1] != "-3" {
					t.Errorf("VM group pool filter %s, want -3 (the caller's)", call.Params[1])
				}
			}
		})
	}
}

// A failed write deletes what the run created, newest first, and says so;
// what it could not delete is named.
func TestCreateRollsBack(t *testing.T) {
	t.Parallel()
	f := &registertest.OneFlow{Pool: `{"DOCUMENT_POOL":{}}`, Fail: "Role 'master' is invalid"}
	o := &registertest.Oned{NextID: 40}
	out, err := groupRegistrar(t, f, o).Create(context.Background(), haSpec(), Options{Version: flow.Version7})
	want := "oneflow: POST /service_template: 400 Bad Request: Role 'master' is invalid; rolled back: deleted vm-template 42 (kubernetes-worker), vm-template 41 (kubernetes-master), vm-group 40 (kubernetes-anti-affinity)"
	if err == nil || err.Error() != want || len(out) != 0 {
		t.Fatalf("err = %v\nwant  %s\noutcomes %v", err, want, outcomes(out))
	}
	var he *HTTPError
	if !errors.As(err, &he) {
		t.Errorf("the cause is lost: %v", err)
	}
	var deletes []string
	for _, c := range o.Calls {
		if strings.HasSuffix(c.Method, ".delete") {
			deletes = append(deletes, c.Method+" "+c.Params[1])
		}
	}
	if wantDel := []string{"one.template.delete 42", "one.template.delete 41", "one.vmgroup.delete 40"}; !slices.Equal(deletes, wantDel) {
		t.Errorf("deletes %v, want %v", deletes, wantDel)
	}

	// The worker template fails: the master's and the group go; a delete
	// that fails is reported and its outcome kept.
	o = &registertest.Oned{NextID: 40, FailMethod: map[string]string{"one.vmgroup.delete": "[one.vmgroup.delete] Cannot delete, VMs in group"}}
	o.FailMethod["one.template.allocate"] = "[one.template.allocate] quota"
	out, err = groupRegistrar(t, &registertest.OneFlow{Pool: `{}`}, o).Create(context.Background(), haSpec(), Options{Version: flow.Version7})
	if err == nil || !strings.Contains(err.Error(), "quota; rolling back, could not delete vm-group 40 (kubernetes-anti-affinity): oned: deleting VM group 40: ") ||
		strings.Join(outcomes(out), ";") != "vm-group 40 created (kubernetes-anti-affinity)" {
		t.Errorf("err = %v, outcomes %v", err, outcomes(out))
	}

	// Updated and reused objects are never deleted.
	o = &registertest.Oned{NextID: 40, Pool: registertest.VMPool(registertest.VMTemplate{ID: 5, Name: "kubernetes-master"}, registertest.VMTemplate{ID: 6, Name: "kubernetes-worker"}),
		Groups: registertest.VMGroupPool(registertest.VMGroup{ID: 2, Name: "kubernetes-anti-affinity", Roles: map[string]string{"master": "ANTI_AFFINED"}})}
	_, err = groupRegistrar(t, &registertest.OneFlow{Pool: `{}`, Fail: "no"}, o).Create(context.Background(), haSpec(), Options{Version: flow.Version7, Replace: true})
	if err == nil || strings.Contains(err.Error(), "rolled back") || strings.Contains(strings.Join(o.Methods(), " "), "delete") {
		t.Errorf("err = %v, methods %v", err, o.Methods())
	}
}

func TestCreateVMGroupNeedsAClient(t *testing.T) {
	t.Parallel()
	f := &registertest.OneFlow{Pool: `{}`}
	o := &registertest.Oned{}
	_, err := registrar(t, f, o).Create(context.Background(), haSpec(), Options{Version: flow.Version7})
	if err == nil || !strings.Contains(err.Error(), `roles master spread over hosts through VM group "kubernetes-anti-affinity"`) || strings.Contains(strings.Join(o.Methods(), " "), "allocate") {
		t.Errorf("err = %v, methods %v", err, o.Methods())
	}
}
