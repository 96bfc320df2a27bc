package marketplace

import (
	"errors"
	"strings"
	"testing"
)

const goodEnv = `# pins
ONEKUBE_K8S_VERSION=1.36.3
ONEKUBE_CONTAINERD_VERSION=2.1.4

ONEKUBE_FLANNEL_VERSION=0.27.4
ONEKUBE_CALICO_VERSION=3.30.3
ONEKUBE_DEBIAN_RELEASE=12
ONEKUBE_APPLIANCE_REVISION=2
ONEKUBE_RUNC_VERSION=1.3.0
`

func TestParseVersions(t *testing.T) {
	v, err := ParseVersions([]byte(goodEnv))
	if err != nil {
		t.Fatal(err)
	}
	want := Versions{Kubernetes: "1.36.3", Containerd: "2.1.4", Flannel: "0.27.4", Calico: "3.30.3", Debian: "12", Revision: "2"}
	if v != want {
		t.Errorf("got %+v, want %+v", v, want)
	}
	if v.Minor() != "1.36" {
		t.Errorf("Minor() = %q", v.Minor())
	}

	bad := map[string]struct{ env, msg string }{
		"v prefix":  {strings.Replace(goodEnv, "=1.36.3", "=v1.36.3", 1), "ONEKUBE_K8S_VERSION"},
		"missing":   {strings.Replace(goodEnv, "ONEKUBE_CALICO_VERSION=3.30.3\n", "", 1), "ONEKUBE_CALICO_VERSION missing"},
		"quoted":    {strings.Replace(goodEnv, "=12", `="12"`, 1), "line 7"},
		"duplicate": {goodEnv + "ONEKUBE_K8S_VERSION=1.36.4\n", "set twice"},
		"no equals": {goodEnv + "ONEKUBE_X\n", "line 10"},
		"expansion": {goodEnv + "X=$HOME\n", "plain value"},
		"two minor": {strings.Replace(goodEnv, "=1.36.3", "=1.36", 1), "ONEKUBE_K8S_VERSION"},
		"text rev":  {strings.Replace(goodEnv, "REVISION=2", "REVISION=two", 1), "ONEKUBE_APPLIANCE_REVISION"},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := ParseVersions([]byte(tc.env))
			if !errors.Is(err, ErrVersions) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %v, want ErrVersions mentioning %q", err, tc.msg)
			}
		})
	}
}

func FuzzParseVersions(f *testing.F) {
	f.Add([]byte(goodEnv))
	f.Add([]byte("A=\nB=1\n#c\n"))
	f.Add([]byte("ONEKUBE_K8S_VERSION=1.2.3\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseVersions(data)
		if err != nil {
			return
		}
		// Anything accepted has a usable minor version.
		if !strings.HasPrefix(v.Kubernetes, v.Minor()+".") {
			t.Errorf("Minor %q of %q", v.Minor(), v.Kubernetes)
		}
	})
}
