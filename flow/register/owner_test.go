package register

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/onekube/onekube/flow"
	"github.com/onekube/onekube/flow/register/registertest"
)

// TestCreateOnlyOwnTemplates: as oneadmin (UID 0), whose pools show every
// user's templates, --replace never updates alice's (UID 5) "kubernetes"
// service template or points it at her VM templates; it finds and updates
// only oneadmin's own, and creates what oneadmin lacks.
func TestCreateOnlyOwnTemplates(t *testing.T) {
	t.Parallel()
	alices := `{"ID":"7","UID":"5","UNAME":"alice","NAME":"kubernetes"}`
	mine := `{"ID":"8","UID":"0","UNAME":"oneadmin","NAME":"kubernetes"}`
	aliceVMs := []registertest.VMTemplate{{ID: 11, Name: "kubernetes-master", UID: 5}, {ID: 12, Name: "kubernetes-worker", UID: 5}}
	cases := []struct {
		name         string
		pool         string
		vms          []registertest.VMTemplate
		ignoreFilter bool
		want         string
		wantWrites   []string
	}{
		{"only alice's", `{"DOCUMENT_POOL":{"DOCUMENT":[` + alices + `]}}`, aliceVMs, false,
			"vm-template master 40 created (kubernetes-master); vm-template worker 41 created (kubernetes-worker); service-template 9 created (kubernetes)",
			[]string{"POST /service_template"}},
		{"only alice's, lenient oned", `{"DOCUMENT_POOL":{"DOCUMENT":` + alices + `}}`, aliceVMs, true,
			"vm-template master 40 created (kubernetes-master); vm-template worker 41 created (kubernetes-worker); service-template 9 created (kubernetes)",
			[]string{"POST /service_template"}},
		{"alice's and mine", `{"DOCUMENT_POOL":{"DOCUMENT":[` + alices + `,` + mine + `]}}`,
			append(slices.Clone(aliceVMs), registertest.VMTemplate{ID: 21, Name: "kubernetes-master"}, registertest.VMTemplate{ID: 22, Name: "kubernetes-worker"}), true,
			"vm-template master 21 updated (kubernetes-master); vm-template worker 22 updated (kubernetes-worker); service-template 8 updated (kubernetes)",
			[]string{"PUT /service_template/8"}},
		{"no owner given", `{"DOCUMENT_POOL":{"DOCUMENT":[{"ID":"7","NAME":"kubernetes"}]}}`, nil, false,
			"vm-template master 40 created (kubernetes-master); vm-template worker 41 created (kubernetes-worker); service-template 9 created (kubernetes)",
			[]string{"POST /service_template"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &registertest.OneFlow{Pool: tc.pool, CreateID: 9}
			o := &registertest.Oned{Pool: registertest.VMPool(tc.vms...), NextID: 40, IgnoreFilter: tc.ignoreFilter}
			spec := flow.DefaultSpec()
			out, err := registrar(t, f, o).Create(context.Background(), spec, Options{Version: flow.Version7, Replace: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(outcomes(out), "; "); got != tc.want {
				t.Errorf("outcomes: %s", got)
			}
			var writes []string
			for _, w := range f.Writes() {
				writes = append(writes, w.Method+" "+w.Path)
				if strings.Contains(w.Body, `"template_id": 11`) || strings.Contains(w.Body, `"template_id": 12`) {
					t.Errorf("the service points at alice's VM templates: %s", w.Body)
				}
			}
			if !slices.Equal(writes, tc.wantWrites) {
				t.Errorf("oneflow writes %v, want %v", writes, tc.wantWrites)
			}
			for _, c := range o.Calls {
				if c.Method == "one.template.update" && (c.Params[1] == "11" || c.Params[1] == "12") {
					t.Errorf("alice's VM template %s updated", c.Params[1])
				}
			}
		})
	}
}

// TestCreateFlowUser: with a separate OneFlow user (ONEFLOW_USER), the
// service template is that user's, matched by owner name.
func TestCreateFlowUser(t *testing.T) {
	t.Parallel()
	f := &registertest.OneFlow{Pool: `{"DOCUMENT_POOL":{"DOCUMENT":[{"ID":"7","UID":"3","UNAME":"flowbot","NAME":"kubernetes"},{"ID":"8","UID":"0","UNAME":"oneadmin","NAME":"kubernetes"}]}}`}
	o := &registertest.Oned{}
	r := registrar(t, f, o)
	r.FlowUser = "flowbot"
	out, err := r.Create(context.Background(), withIDs(flow.DefaultSpec(), 1, 2), Options{Version: flow.Version7, Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomes(out)[2]; got != "service-template 7 updated (kubernetes)" {
		t.Errorf("outcome %s", got)
	}
}
