package system

import (
	"testing"
)

func TestRootHostname(t *testing.T) {
	t.Parallel()
	root := Root(t.TempDir())
	h := HostnameFor(root)
	if _, ok := h.(RootHostname); !ok {
		t.Fatalf("HostnameFor(%s) = %T, want the simulated host's", root, h)
	}
	if _, err := h.Get(); err == nil {
		t.Error("Get without a hostname file succeeded")
	}
	if err := root.WriteFile(KernelHostnameFile, []byte("onekube-appliance\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := h.Get(); err != nil || got != "onekube-appliance" {
		t.Errorf("Get = %q, %v", got, err)
	}
	if err := h.Set("worker-13"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{KernelHostnameFile, EtcHostname} {
		if b, err := root.ReadFile(f); err != nil || string(b) != "worker-13\n" {
			t.Errorf("%s = %q, %v", f, b, err)
		}
	}
	if _, ok := HostnameFor("/").(KernelHostname); !ok {
		t.Error("the root / is not the real kernel")
	}
}
