package register

import (
	"errors"
	"io/fs"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
)

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	files := func(m map[string]string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			if s, ok := m[p]; ok {
				return []byte(s), nil
			}
			return nil, fs.ErrNotExist
		}
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		name      string
		env       map[string]string
		files     map[string]string
		flags     Config
		want      Config
		wantErr   error
		flowCreds [2]string
	}{
		{name: "defaults and one_auth", files: map[string]string{"/h/.one/one_auth": "oneadmin:pa:ss\n"},
			want: Config{XMLRPC: DefaultXMLRPC, OneFlow: DefaultOneFlow, User: "oneadmin"}, flowCreds: [2]string{"oneadmin", "pa:ss"}},
		{name: "environment", env: map[string]string{"ONE_XMLRPC": "http://one:2633/RPC2", "ONEFLOW_URL": "http://one:2474/", "ONE_AUTH": "/etc/auth",
			"ONEFLOW_USER": "flowuser", "ONEFLOW_PASSWORD": "fp"}, files: map[string]string{"/etc/auth": "u:p"},
			want: Config{XMLRPC: "http://one:2633/RPC2", OneFlow: "http://one:2474", User: "u"}, flowCreds: [2]string{"flowuser", "fp"}},
		{name: "endpoint file", files: map[string]string{"/h/.one/one_auth": "u:p", "/h/.one/oneflow_endpoint": "http://f:2474\n"},
			want: Config{XMLRPC: DefaultXMLRPC, OneFlow: "http://f:2474", User: "u"}, flowCreds: [2]string{"u", "p"}},
		{name: "flags win", env: map[string]string{"ONE_XMLRPC": "http://env/RPC2"},
			flags: Config{XMLRPC: "http://flag/RPC2", OneFlow: "http://flag:2474", User: "fu", Password: vmcontext.NewSecret("fp")},
			want:  Config{XMLRPC: "http://flag/RPC2", OneFlow: "http://flag:2474", User: "fu"}, flowCreds: [2]string{"fu", "fp"}},
		{name: "no auth", wantErr: ErrNoCredentials},
		{name: "bad auth", files: map[string]string{"/h/.one/one_auth": "justauser"}, wantErr: ErrNoCredentials},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LoadConfig(Env{Getenv: env(tc.env), ReadFile: files(tc.files), Home: "/h"}, tc.flags)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.XMLRPC != tc.want.XMLRPC || got.OneFlow != tc.want.OneFlow || got.User != tc.want.User ||
				got.FlowUser != tc.flowCreds[0] || got.FlowPassword.Reveal() != tc.flowCreds[1] {
				t.Errorf("got %+v (flow %s/%s)", got, got.FlowUser, got.FlowPassword.Reveal())
			}
		})
	}
}
