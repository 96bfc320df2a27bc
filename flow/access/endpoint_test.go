package access

import (
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/OpenNebula/one/src/oca/go/src/goca/schemas/vm"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/kubeconfig"
)

// masterVM is a one.vm.info document with a CONTEXT of two NICs.
func masterVM(t *testing.T, ctx map[string]string) *vm.VM {
	t.Helper()
	base := map[string]string{
		"ETH0_IP": "10.0.0.5", "ETH0_MAC": "02:00:0a:00:00:05", "ETH0_MASK": "255.255.255.0",
		"ETH1_IP": "192.168.7.5", "ETH1_MAC": "02:00:c0:a8:07:05", "ETH1_MASK": "255.255.255.0",
	}
	for k, v := range ctx {
		base[k] = v
	}
	var b strings.Builder
	b.WriteString("<VM><ID>49</ID><NAME>m</NAME><STATE>3</STATE><LCM_STATE>3</LCM_STATE><TEMPLATE><CONTEXT>")
	for k, v := range base {
		fmt.Fprintf(&b, "<%s><![CDATA[%s]]></%s>", k, v, k)
	}
	b.WriteString("</CONTEXT><NIC><MAC>02:00:0a:00:00:05</MAC><NETWORK>public</NETWORK><NIC_ID>0</NIC_ID></NIC>")
	b.WriteString("<NIC><MAC>02:00:C0:A8:07:05</MAC><NETWORK>k8s</NETWORK><NIC_ID>1</NIC_ID></NIC></TEMPLATE><USER_TEMPLATE></USER_TEMPLATE></VM>")
	var v vm.VM
	if err := xml.Unmarshal([]byte(b.String()), &v); err != nil {
		t.Fatal(err)
	}
	return &v
}

// The address comes from what oned says of the master (CONTEXT and NICs),
// by the agent's own rule; USER_TEMPLATE is never read for it.
func TestServer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ctx  map[string]string
		want string
	}{
		{nil, "https://10.0.0.5:6443"},
		{map[string]string{vmcontext.KeyPort: "7443"}, "https://10.0.0.5:7443"},
		{map[string]string{vmcontext.KeyAddress: "192.168.7.0/24"}, "https://192.168.7.5:6443"},
		{map[string]string{vmcontext.KeyAddress: "k8s"}, "https://192.168.7.5:6443"},
		{map[string]string{KeyControlPlaneEP: "k8s.example.org"}, "https://k8s.example.org:6443"},
		{map[string]string{KeyControlPlaneEP: "10.0.0.100:8443", vmcontext.KeyPort: "7443"}, "https://10.0.0.100:8443"},
		{map[string]string{vmcontext.KeyAddress: "172.16.0.0/16"}, ""},
		{map[string]string{vmcontext.KeyPort: "70000"}, ""},
		{map[string]string{KeyControlPlaneEP: "https://x"}, ""},
	} {
		got, err := Server(masterVM(t, tc.ctx))
		if (err == nil) != (tc.want != "") || got != tc.want {
			t.Errorf("%v: %q, %v; want %q", tc.ctx, got, err, tc.want)
		}
	}
}

func TestPickUser(t *testing.T) {
	t.Parallel()
	a, b := newAgeIdentity(t), newAgeIdentity(t)
	users := "alice:" + a.Recipient + ";ops:" + a.Recipient + ":cluster-admin;bob:" + b.Recipient
	for _, tc := range []struct {
		ctx  map[string]string
		id   Identity
		as   string
		want string
		err  string
	}{
		{map[string]string{vmcontext.KeyKubeconfigUsers: users}, b, "", "bob", ""},
		{map[string]string{vmcontext.KeyKubeconfigUsers: users}, a, "", "", "pick one with --as"},
		{map[string]string{vmcontext.KeyKubeconfigUsers: users}, a, "ops", "ops:cluster-admin", ""},
		{map[string]string{vmcontext.KeyKubeconfigUsers: users}, a, "alice", "alice", ""},
		{map[string]string{vmcontext.KeyKubeconfigUsers: users}, b, "alice", "", "not your key"},
		{map[string]string{vmcontext.KeyKubeconfigUsers: "alice:"}, a, "", "", "authorizes nobody"},
		{nil, a, "", "", "predate kubeconfig access"},
	} {
		u, err := pickUser(masterVM(t, tc.ctx), Want{Identity: tc.id, As: tc.as})
		got := u.Name
		if u.MaxRole == kubeconfig.RoleClusterAdmin {
			got += ":" + u.MaxRole
		}
		if got != tc.want || (tc.err == "") != (err == nil) || err != nil && (!strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrNotAuthorized)) {
			t.Errorf("%v as %q: %q, %v; want %q, %q", tc.ctx, tc.as, got, err, tc.want, tc.err)
		}
	}
}

func newAgeIdentity(t *testing.T) Identity {
	t.Helper()
	id, err := CreateIdentity(t.TempDir()+"/k", testNow)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

var testNow = time.Unix(1767225600, 0)
