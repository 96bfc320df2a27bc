package kubeadm

import (
	"errors"
	"strings"
	"testing"
)

func TestParseProviderID(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in     string
		id     int
		ok     bool
		failed bool
	}{
		{in: "one://0", id: 0, ok: true},
		{in: "one://42", id: 42, ok: true},
		{in: "one://2147483647", id: 2147483647, ok: true},
		{in: "", ok: false},
		{in: "aws:///eu-west-1a/i-0abc", ok: false},
		{in: "ONE://42", ok: false},
		{in: "one:/42", ok: false},
		{in: "one://", ok: true, failed: true},
		{in: "one://042", ok: true, failed: true},
		{in: "one://+42", ok: true, failed: true},
		{in: "one://-1", ok: true, failed: true},
		{in: "one:// 42", ok: true, failed: true},
		{in: "one://42 ", ok: true, failed: true},
		{in: "one://42/x", ok: true, failed: true},
		{in: "one://2147483648", ok: true, failed: true},
		{in: "one://99999999999", ok: true, failed: true},
		{in: "one://٤٢", ok: true, failed: true},
	} {
		id, ok, err := ParseProviderID(c.in)
		if ok != c.ok || (err != nil) != c.failed || (!c.failed && c.ok && id != c.id) {
			t.Errorf("ParseProviderID(%q) = %d, %v, %v; want %d, %v, failed=%v", c.in, id, ok, err, c.id, c.ok, c.failed)
		}
	}
}

func TestRenderRefusesForeignProviderID(t *testing.T) {
	t.Parallel()
	p := baseJoin()
	p.ProviderID = "one://007"
	if _, err := RenderJoin(p); !errors.Is(err, ErrParams) {
		t.Errorf("RenderJoin with %q: %v, want ErrParams", p.ProviderID, err)
	}
	q := baseInit()
	q.ProviderID = "aws:///i-1"
	if _, err := RenderInit(q); !errors.Is(err, ErrParams) {
		t.Errorf("RenderInit with %q: %v, want ErrParams", q.ProviderID, err)
	}
}

// FuzzParseProviderID: whatever a Node's spec says, the parser never
// panics, accepts only ProviderID's own spelling, and keeps its errors
// bounded.
func FuzzParseProviderID(f *testing.F) {
	for _, s := range []string{"one://0", "one://42", "one://", "one://042", "one://-1", "one://2147483648", "aws:///x", "", "one://1\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, ok, err := ParseProviderID(s)
		if ok && err == nil {
			if id < 0 || ProviderID(id) != s {
				t.Fatalf("ParseProviderID(%q) = %d, but ProviderID(%d) = %q", s, id, id, ProviderID(id))
			}
		}
		if ok != strings.HasPrefix(s, ProviderIDScheme) || (!ok && err != nil) {
			t.Fatalf("ParseProviderID(%q): ok=%v, err=%v", s, ok, err)
		}
		if err != nil && len(err.Error()) > 200 {
			t.Fatalf("ParseProviderID: error of %d bytes", len(err.Error()))
		}
	})
}
