package onegatesim

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// Benchmarks of the in-process handler (no network): the cost of the
// simulator itself per OneGate request.

func benchSim(b *testing.B) (*Sim, string) {
	s := New(Options{Dir: b.TempDir(), Endpoint: "http://127.0.0.1:5030"})
	b.Cleanup(func() { s.Close() })
	if _, err := s.Instantiate([]byte(simpleTemplate("none", false, 1, 3, "")), nil); err != nil {
		b.Fatal(err)
	}
	v, _ := s.VM(100)
	return s, v.Token.Reveal()
}

func BenchmarkGetVMByID(b *testing.B) {
	s, tok := benchSim(b)
	h := s.Handler()
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("GET", "/vms/101", nil)
		r.Header.Set("X-ONEGATE-VMID", "100")
		r.Header.Set("X-ONEGATE-TOKEN", tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatal(w.Code, w.Body.String())
		}
	}
}

func BenchmarkPutVM(b *testing.B) {
	s, tok := benchSim(b)
	h := s.Handler()
	const body = "data=ONEGATE_K8S_TOKEN%3D%22sg7711.p19vy0eqxefc0lqz%22%0AONEGATE_K8S_MASTER%3D%2210.0.0.5%22&type=1"
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("PUT", "/vm", strings.NewReader(body))
		r.Header.Set("X-ONEGATE-VMID", "100")
		r.Header.Set("X-ONEGATE-TOKEN", tok)
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatal(w.Code, w.Body.String())
		}
	}
}
