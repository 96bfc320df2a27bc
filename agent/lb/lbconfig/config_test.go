package lbconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigRoundTrip(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "lb.json")
	if c, err := ReadConfig(p); err != nil || len(c.Backends) != 0 {
		t.Fatalf("missing file: %v, %v", c, err)
	}
	in := Config{Backends: []string{"192.0.2.11:6443", "192.0.2.10:6443", "192.0.2.11:6443", "[2001:db8::1]:6443"}, Source: SourceOneGate}
	if err := WriteConfig(p, in); err != nil {
		t.Fatal(err)
	}
	got, err := ReadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Backends, " ") != "192.0.2.10:6443 192.0.2.11:6443 [2001:db8::1]:6443" || got.Source != SourceOneGate {
		t.Errorf("read back %+v", got)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
}

func TestConfigRefusesBadBackends(t *testing.T) {
	t.Parallel()
	for _, b := range []string{"", "10.0.0.1", "k8s.example.com:6443", "0.0.0.0:6443", "224.0.0.1:6443", "10.0.0.1:0", "[fe80::1%eth0]:6443"} {
		if err := (Config{Backends: []string{b}}).Check(); err == nil {
			t.Errorf("%q accepted", b)
		}
	}
	many := make([]string, MaxBackends+1)
	for i := range many {
		many[i] = "10.0.0.1:6443"
	}
	if err := (Config{Backends: many}).Check(); err == nil {
		t.Error("too many backends accepted")
	}
}

// FuzzReadConfig: whatever the file holds, reading it either fails or
// yields backends every dial can use.
func FuzzReadConfig(f *testing.F) {
	f.Add([]byte(`{"backends":["10.0.0.1:6443"],"source":"onegate"}`))
	f.Add([]byte(`{"backends":["[::1]:1","x"]}`))
	f.Add([]byte(`null`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "lb.json")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := ReadConfig(p)
		if err != nil {
			return
		}
		for _, be := range c.Backends {
			if _, err := ParseBackend(be); err != nil {
				t.Fatalf("accepted %q: %v", be, err)
			}
		}
		if _, err := json.Marshal(c); err != nil {
			t.Fatal(err)
		}
	})
}
