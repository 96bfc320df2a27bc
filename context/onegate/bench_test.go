package onegate_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/onekube/onekube/context/onegate"
)

// The request cost of the client: one round trip over loopback to a server
// that only records, so the figures are the client's own encoding, headers,
// connection reuse and decoding.
func BenchmarkClientGetVM(b *testing.B) {
	srv := httptest.NewServer(&recorder{body: string(readTestdata(b, "vm-7.json"))})
	defer srv.Close()
	c := newClient(b, srv.URL, nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.GetVM(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkClientUpdateVM(b *testing.B) {
	srv := httptest.NewServer(&discard{})
	defer srv.Close()
	c := newClient(b, srv.URL, nil)
	ctx := context.Background()
	kvs := []onegate.KV{
		{Key: "ONEGATE_K8S_TOKEN", Value: "sg7711.p19vy0eqxefc0lqz"},
		{Key: "ONEGATE_K8S_HASH", Value: "09a9ed140fec2fa1a2281a3125952d6f2951b67a67534647b0a606ae2d478f60"},
		{Key: "ONEGATE_K8S_MASTER", Value: "172.20.0.100"},
		{Key: "READY", Value: "YES"},
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.UpdateVM(ctx, kvs...); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeService(b *testing.B) {
	data := readTestdata(b, "service-extended.json")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := onegate.DecodeService(data); err != nil {
			b.Fatal(err)
		}
	}
}

// discard answers 200 without keeping anything, so long runs stay flat.
type discard struct{}

func (discard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
}
