package onegate

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
)

// Not parallel: it swaps the package's view of the proxy environment.
func TestProxyFromEnvironmentExceptTProxy(t *testing.T) {
	var proxied []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied = append(proxied, r.Method+" "+r.RequestURI+" "+r.Header.Get("X-ONEGATE-VMID"))
		_, _ = io.WriteString(w, `{"VM":{"ID":"3"}}`)
	}))
	defer proxy.Close()
	proxyURL, _ := url.Parse(proxy.URL)
	saved := proxyFromEnvironment
	proxyFromEnvironment = func(*http.Request) (*url.URL, error) { return proxyURL, nil }
	defer func() { proxyFromEnvironment = saved }()

	for _, tt := range []struct {
		target string
		want   *url.URL
	}{
		{"http://169.254.16.9:5030/vm", nil},
		{"https://169.254.16.9/vm", nil},
		{"http://gate.example:5030/vm", proxyURL},
		{"http://169.254.16.10:5030/vm", proxyURL},
	} {
		req, _ := http.NewRequest(http.MethodGet, tt.target, nil)
		got, err := proxyFor(req)
		if err != nil || got != tt.want {
			t.Errorf("proxyFor(%s) = %v, %v; want %v", tt.target, got, err, tt.want)
		}
	}

	// End to end: the built-in client really goes through the proxy.
	c, err := New(Config{Endpoint: "http://gate.example:5030", VMID: 3, Token: vmcontext.NewSecret("tokentoken"), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetVM(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(proxied) != 1 || proxied[0] != "GET http://gate.example:5030/vm 3" {
		t.Errorf("proxy saw %q", proxied)
	}
}

func TestTransportUsesProxyRule(t *testing.T) {
	t.Parallel()
	tr := mustTransport(t)
	req, _ := http.NewRequest(http.MethodGet, "http://169.254.16.9:5030/vm", nil)
	if u, err := tr.Proxy(req); err != nil || u != nil {
		t.Errorf("transport proxies the tproxy address: %v %v", u, err)
	}
}

func mustTransport(t *testing.T) *http.Transport {
	t.Helper()
	hc, err := newHTTPClient(Config{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return hc.Transport.(*http.Transport)
}
