package flow

import (
	"strings"
	"testing"
)

// TestValidateParentRefs: OneFlow replaces ${role.xpath} in a role's extra
// template with "" unless role is one of the role's parents (Role#evaluate,
// role.rb, 6.10.5 and 7.4.0), whether the role exists or not; validate
// says so, naming the role and the reference.
func TestValidateParentRefs(t *testing.T) {
	t.Parallel()
	r7 := func(old, new string) string { return mustReplace(t, ok7, old, new) }
	r6 := func(old, new string) string { return mustReplace(t, ok6, old, new) }
	workerCtx7 := func(ctx string) string {
		return r7(`"template_contents":{"NIC":[{"NETWORK_ID":"$Private"}]}`, `"template_contents":{"NIC":[{"NETWORK_ID":"$Private"}],"CONTEXT":`+ctx+`}`)
	}
	const ctxPath = "$.roles[1].template_contents.CONTEXT"
	cases := []struct {
		name string
		doc  string
		want []string // "" entries: no problem about references
	}{
		{"parent ref", workerCtx7(`{"ONEKUBE_MASTER_VM_ID":"${master.vm.id}"}`), nil},
		{"no parents", mustReplace(t, workerCtx7(`{"ONEKUBE_MASTER_VM_ID":"${master.vm.id}"}`), `"parents":["master"],`, ``),
			[]string{`error ` + ctxPath + `.ONEKUBE_MASTER_VM_ID: "${master.vm.id}": role "master" is not among the parents of role "worker": OneFlow replaces the reference with ""`}},
		{"no such role", workerCtx7(`{"X":"${x.vm.id}"}`),
			[]string{`error ` + ctxPath + `.X: "${x.vm.id}": "x" is not a role of this service: OneFlow replaces the reference with ""`}},
		{"empty reference", workerCtx7(`{"X":"${}"}`),
			[]string{`error ` + ctxPath + `.X: "${}": "" is not a role of this service`}},
		{"one of two", workerCtx7(`{"X":"${master.vm.id}-${etcd.TEMPLATE.CONTEXT.ETH0_IP}"}`),
			[]string{`error ` + ctxPath + `.X: "${etcd.TEMPLATE.CONTEXT.ETH0_IP}": "etcd" is not a role`}},
		{"nested and listed", r7(`"template_contents":{"NIC":[{"NETWORK_ID":"$Private"}]}`,
			`"template_contents":{"NIC":[{"NETWORK_ID":"$Private","IP":"${worker.TEMPLATE.NIC.IP}"}]}`),
			[]string{`error $.roles[1].template_contents.NIC[0].IP: "${worker.TEMPLATE.NIC.IP}": role "worker" is not among the parents of role "worker"`}},
		{"master on itself", r7(`"template_contents":{"NIC":[{"NAME":"NIC0","NETWORK_ID":"$Private"}]}`,
			`"template_contents":{"NIC":[{"NAME":"NIC0","NETWORK_ID":"$Private"}],"CONTEXT":{"ONEKUBE_MASTER_VM_ID":"${master.vm.id}"}}`),
			[]string{`error $.roles[0].template_contents.CONTEXT.ONEKUBE_MASTER_VM_ID: "${master.vm.id}": role "master" is not among the parents of role "master"`}},
		{"6.x parent ref", r6(`"parents":["master"],`, `"parents":["master"],"vm_template_contents":"ONEKUBE_MASTER_VM_ID = \"${master.vm.id}\"\n",`), nil},
		{"6.x no parents", r6(`"parents":["master"],`, `"vm_template_contents":"ONEKUBE_MASTER_VM_ID = \"${master.vm.id}\"\n",`),
			[]string{`error $.roles[1].vm_template_contents: "${master.vm.id}": role "master" is not among the parents of role "worker"`}},
		{"6.x no such role", r6(`"parents":["master"],`, `"parents":["master"],"vm_template_contents":"A = \"${mastr.vm.id}\"\n",`),
			[]string{`error $.roles[1].vm_template_contents: "${mastr.vm.id}": "mastr" is not a role of this service`}},
		{"no line breaks", workerCtx7(`{"X":"${a\nb}"}`), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, p := range Validate([]byte(tc.doc), ValidateOptions{}) {
				if strings.Contains(p.Message, "OneFlow replaces the reference") {
					got = append(got, p.String())
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d reference problems, want %d:\n%s", len(got), len(tc.want), strings.Join(got, "\n"))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("got %q\nwant %q", got[i], w)
				}
			}
		})
	}
}
