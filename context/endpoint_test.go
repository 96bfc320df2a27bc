package context

import (
	"strings"
	"testing"
)

func TestParseControlPlaneEndpoint(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want, err string
	}{
		{"", "", ""},
		{"10.0.0.100", "10.0.0.100:6443", ""},
		{" 10.0.0.100:7443 ", "10.0.0.100:7443", ""},
		{"K8s.Example.com", "k8s.example.com:6443", ""},
		{"k8s.example.com:443", "k8s.example.com:443", ""},
		{"fd00::10", "[fd00::10]:6443", ""},
		{"[fd00::10]", "[fd00::10]:6443", ""},
		{"[fd00::10]:7443", "[fd00::10]:7443", ""},
		{"127.0.0.1", "", "loopback"},
		{"0.0.0.0:6443", "", "unspecified"},
		{"169.254.1.1", "", "link-local"},
		{"https://10.0.0.1:6443", "", "no scheme"},
		{"10.0.0.1:0", "", "not a TCP port"},
		{"10.0.0.1:99999", "", "not a TCP port"},
		{"10.0.0.1:abc", "", "not a TCP port"},
		{"bad_name", "", "neither an IP"},
		{"-x.example.com", "", "neither an IP"},
		{"10.0.0.1/24", "", "no scheme or path"},
	} {
		got, err := ParseControlPlaneEndpoint(c.in, 6443)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one containing %q", c.in, err, c.err)
		case got != c.want:
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzParseControlPlaneEndpoint(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "[fd00::1]:6443", "a.b:1", "::1", "x:y:z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseControlPlaneEndpoint(s, 6443)
		if err != nil || got == "" {
			return
		}
		// What comes out parses again to itself: kubeadm gets one form.
		again, err := ParseControlPlaneEndpoint(got, 1)
		if err != nil || again != got {
			t.Fatalf("%q -> %q -> %q, %v", s, got, again, err)
		}
	})
}
