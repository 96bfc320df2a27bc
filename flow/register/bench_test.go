package register

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
)

// BenchmarkOnedHugeAnswer reads a VM whose one.vm.info answer is 100 MB.
// B/op is what the bound costs: the answer is refused after 16 MiB
// (before the bound, the CLI's peak RSS on such an answer was 761 MB).
func BenchmarkOnedHugeAnswer(b *testing.B) {
	body := []byte(rpcAnswer(vTrue, "<value><string>"+strings.Repeat("a", 100<<20)+"</string></value>", vZero))
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Status: "200 OK", Body: io.NopCloser(bytes.NewReader(body)), Request: r, Header: http.Header{}, ContentLength: -1}, nil
	})}
	o := NewOnedVMs("http://oned.invalid/RPC2", user, vmcontext.NewSecret(pass), hc)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := o.Info(context.Background(), 1); !errors.Is(err, ErrTooLarge) {
			b.Fatal(err)
		}
	}
}
