package onegate_test

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

const testToken = "yCxieDUS7kra7Vn9ILA0+g=="

// wireRequest is one request exactly as the server received it.
type wireRequest struct {
	Method, URI, ContentType, Token, VMID, UserAgent, Body string
}

// recorder is an httptest handler that records requests and replies with a
// fixed status and body.
type recorder struct {
	mu     sync.Mutex
	reqs   []wireRequest
	status int
	body   string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.reqs = append(r.reqs, wireRequest{
		Method: req.Method, URI: req.RequestURI, ContentType: req.Header.Get("Content-Type"),
		Token: req.Header.Get("X-ONEGATE-TOKEN"), VMID: req.Header.Get("X-ONEGATE-VMID"),
		UserAgent: req.Header.Get("User-Agent"), Body: string(body),
	})
	status, reply := r.status, r.body
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, reply)
}

func (r *recorder) requests() []wireRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]wireRequest(nil), r.reqs...)
}

func newClient(t testing.TB, endpoint string, mod func(*onegate.Config)) *onegate.Client {
	t.Helper()
	cfg := onegate.Config{Endpoint: endpoint, VMID: 49, Token: vmcontext.NewSecret(testToken), Timeout: 5 * time.Second, UserAgent: "onekube-test"}
	if mod != nil {
		mod(&cfg)
	}
	c, err := onegate.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClientWire(t *testing.T) {
	t.Parallel()
	vmJSON := `{"VM":{"ID":"49","NAME":"m","STATE":"3","LCM_STATE":"3","USER_TEMPLATE":{"ROLE_NAME":"master"}}}`
	svcJSON := `{"SERVICE":{"id":"21","name":"k","state":2,"roles":[{"name":"master","cardinality":1,"state":2,"nodes":[{"deploy_id":49,"running":null}]}]}}`
	tests := []struct {
		name  string
		reply string
		call  func(*onegate.Client) error
		want  wireRequest
	}{
		{"GET /vm", vmJSON, func(c *onegate.Client) error { _, err := c.GetVM(context.Background()); return err },
			wireRequest{Method: "GET", URI: "/vm"}},
		{"GET /vms/:id", strings.Replace(vmJSON, `"49"`, `"50"`, 1), func(c *onegate.Client) error { _, err := c.GetVMByID(context.Background(), 50); return err },
			wireRequest{Method: "GET", URI: "/vms/50"}},
		{"GET /service short form", svcJSON, func(c *onegate.Client) error { _, err := c.GetService(context.Background()); return err },
			wireRequest{Method: "GET", URI: "/service"}},
		{"GET /service extended", svcJSON, func(c *onegate.Client) error { _, err := c.GetServiceExtended(context.Background()); return err },
			wireRequest{Method: "GET", URI: "/service?extended=true"}},
		{"PUT /vm several keys in one request", "", func(c *onegate.Client) error {
			return c.UpdateVM(context.Background(),
				onegate.KV{Key: "ONEGATE_K8S_TOKEN", Value: "sg7711.p19vy0eqxefc0lqz"},
				onegate.KV{Key: "ONEGATE_K8S_HASH", Value: "09a9ed14"},
				onegate.KV{Key: "ONEGATE_K8S_MASTER", Value: "10.0.0.5"})
		}, wireRequest{Method: "PUT", URI: "/vm", ContentType: "application/x-www-form-urlencoded",
			Body: "data=ONEGATE_K8S_TOKEN%3D%22sg7711.p19vy0eqxefc0lqz%22%0AONEGATE_K8S_HASH%3D%2209a9ed14%22%0AONEGATE_K8S_MASTER%3D%2210.0.0.5%22&type=1"}},
		// A value with '=' goes unquoted, so 6.0+ escape_attr quotes it whole.
		{"PUT /vm value with spaces, = and base64 padding", "", func(c *onegate.Client) error {
			return c.UpdateVM(context.Background(), onegate.KV{Key: "K", Value: "a b=c+/=="})
		}, wireRequest{Method: "PUT", URI: "/vm", ContentType: "application/x-www-form-urlencoded",
			Body: "data=K%3Da+b%3Dc%2B%2F%3D%3D&type=1"}},
		{"PUT /vm mixes quoted and unquoted lines", "", func(c *onegate.Client) error {
			return c.UpdateVM(context.Background(),
				onegate.KV{Key: "ONEGATE_K8S_PHASE", Value: "failed"},
				onegate.KV{Key: "ONEGATE_K8S_ERROR", Value: "level=fatal msg='x'"})
		}, wireRequest{Method: "PUT", URI: "/vm", ContentType: "application/x-www-form-urlencoded",
			Body: "data=ONEGATE_K8S_PHASE%3D%22failed%22%0AONEGATE_K8S_ERROR%3Dlevel%3Dfatal+msg%3D%27x%27&type=1"}},
		{"PUT /vms/:id", "", func(c *onegate.Client) error {
			return c.UpdateVMByID(context.Background(), 51, onegate.KV{Key: "READY", Value: "YES"})
		}, wireRequest{Method: "PUT", URI: "/vms/51", ContentType: "application/x-www-form-urlencoded", Body: "data=READY%3D%22YES%22&type=1"}},
		{"erase", "", func(c *onegate.Client) error { return c.EraseVMKey(context.Background(), "READY") },
			wireRequest{Method: "PUT", URI: "/vm", ContentType: "application/x-www-form-urlencoded", Body: "data=READY&type=2"}},
		{"scale a role", "", func(c *onegate.Client) error { return c.ScaleRole(context.Background(), "worker", 3) },
			wireRequest{Method: "PUT", URI: "/service/role/worker", ContentType: "application/json", Body: `{"cardinality":3}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{body: tt.reply}
			srv := httptest.NewServer(rec)
			defer srv.Close()
			// A path prefix and a trailing slash, as behind a reverse proxy.
			c := newClient(t, srv.URL+"/", nil)
			if err := tt.call(c); err != nil {
				t.Fatalf("call: %v", err)
			}
			want := tt.want
			want.Token, want.VMID, want.UserAgent = testToken, "49", "onekube-test"
			reqs := rec.requests()
			if len(reqs) != 1 || reqs[0] != want {
				t.Errorf("on the wire:\n%+v\nwant\n%+v", reqs, want)
			}
		})
	}
}

func TestClientPathPrefix(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c := newClient(t, srv.URL+"/onegate/", nil)
	if err := c.UpdateVM(context.Background(), onegate.KV{Key: "READY", Value: "YES"}); err != nil {
		t.Fatal(err)
	}
	if got := rec.requests()[0].URI; got != "/onegate/vm" {
		t.Errorf("URI = %s", got)
	}
}

func TestClientDecodes(t *testing.T) {
	t.Parallel()
	rec := &recorder{body: string(readTestdata(t, "service-7.json"))}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	s, err := newClient(t, srv.URL, nil).GetService(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Role("worker"); w == nil || len(w.Nodes) != 2 || w.Nodes[1].VMID != 51 {
		t.Errorf("worker role = %+v", w)
	}
	rec.body = "Not JSON"
	if _, err := newClient(t, srv.URL, nil).GetVM(context.Background()); err == nil || onegate.IsRetryable(err) {
		t.Errorf("undecodable body: error = %v, want a final error", err)
	}
}

func TestClientStatusErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status       int
		body         string
		call         func(*onegate.Client) error
		unauthorized bool
		notFound     bool
		retryable    bool
		msg          string
	}{
		{401, "Not authorized", getVM, true, false, false, "onegate: GET /vm: 401 Unauthorized: Not authorized (the token or VM ID was refused)"},
		{400, "Service 21 does not contain VM 50.", getVM50, false, false, false, "400 Bad Request: Service 21 does not contain VM 50. (that VM is not in this VM's service)"},
		{404, "Service 21 not found", getService, false, true, false, "404 Not Found: Service 21 not found"},
		{403, "Host not permitted", getVM, false, false, false, "OneGate 7.0-7.3 behind a proxy"},
		{403, "Attribute (ROLE_NAME) cannot be modified", updateReady, false, false, false, "403 Forbidden: Attribute (ROLE_NAME) cannot be modified"},
		// An erase of an absent key: final, the key is gone.
		{500, "attribute not found", getVM, false, false, false, "500 Internal Server Error: attribute not found"},
		{500, "[one.vm.update] Parse error: syntax error", updateReady, false, false, true, "500 Internal Server Error"},
		{502, "", getVM, false, false, true, "502 Bad Gateway"},
		{429, "slow down", getVM, false, false, true, "429"},
		{408, "", getVM, false, false, true, "408"},
		// A server echoing the token must not leak it into the error.
		{401, "bad token " + testToken + "\nsecond line", getVM, true, false, false, "bad token <redacted> second line"},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(&recorder{status: tt.status, body: tt.body})
			defer srv.Close()
			err := tt.call(newClient(t, srv.URL, nil))
			var oe *onegate.Error
			if !errors.As(err, &oe) || oe.Status != tt.status {
				t.Fatalf("error = %v, want *onegate.Error %d", err, tt.status)
			}
			if onegate.IsUnauthorized(err) != tt.unauthorized || onegate.IsNotFound(err) != tt.notFound || onegate.IsRetryable(err) != tt.retryable {
				t.Errorf("classified unauthorized=%v notFound=%v retryable=%v", onegate.IsUnauthorized(err), onegate.IsNotFound(err), onegate.IsRetryable(err))
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q, want %q", err, tt.msg)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("error %q leaks the token", err)
			}
		})
	}
}

func getVM(c *onegate.Client) error      { _, err := c.GetVM(context.Background()); return err }
func getVM50(c *onegate.Client) error    { _, err := c.GetVMByID(context.Background(), 50); return err }
func getService(c *onegate.Client) error { _, err := c.GetService(context.Background()); return err }
func updateReady(c *onegate.Client) error {
	return c.UpdateVM(context.Background(), onegate.KV{Key: "ROLE_NAME", Value: "x"})
}

func TestClientRefusesBadInputWithoutSending(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c := newClient(t, srv.URL, nil)
	ctx := context.Background()
	secret := "s3cr3t"
	tests := []struct {
		name string
		call func() error
		msg  string
	}{
		{"comma", func() error { return c.UpdateVM(ctx, onegate.KV{Key: "K", Value: secret + ",x"}) }, `value of K contains ','`},
		{"quote", func() error { return c.UpdateVM(ctx, onegate.KV{Key: "K", Value: secret + `"`}) }, `value of K contains '"'`},
		{"brackets", func() error { return c.UpdateVM(ctx, onegate.KV{Key: "K", Value: "[" + secret}) }, `value of K contains '['`},
		{"closing bracket", func() error { return c.UpdateVM(ctx, onegate.KV{Key: "K", Value: secret + "]"}) }, `contains ']'`},
		{"backslash", func() error { return c.UpdateVM(ctx, onegate.KV{Key: "K", Value: secret + `\n`}) }, `contains '\\'`},
		{"newline", func() error { return c.UpdateVM(ctx, onegate.KV{Key: "K", Value: secret + "\n"}) }, "contains a line break"},
		{"carriage return", func() error { return c.UpdateVM(ctx, onegate.KV{Key: "K", Value: secret + "\r"}) }, "contains a line break"},
		{"control", func() error { return c.UpdateVM(ctx, onegate.KV{Key: "K", Value: secret + "\t"}) }, "control character"},
		{"empty value", func() error { return c.UpdateVM(ctx, onegate.KV{Key: "K", Value: ""}) }, "erase the key instead"},
		{"lower-case key", func() error { return c.UpdateVM(ctx, onegate.KV{Key: "ready", Value: "YES"}) }, "upper-case"},
		{"XML key", func() error { return c.UpdateVM(ctx, onegate.KV{Key: "XMLK", Value: "x"}) }, "oned renames"},
		{"bad UTF-8", func() error { return c.UpdateVM(ctx, onegate.KV{Key: "K", Value: secret + "\xff"}) }, "not valid UTF-8"},
		{"one bad pair stops all", func() error {
			return c.UpdateVM(ctx, onegate.KV{Key: "A", Value: "ok"}, onegate.KV{Key: "B", Value: secret + ","})
		}, "value of B"},
		{"bad key", func() error { return c.UpdateVM(ctx, onegate.KV{Key: "A-B", Value: "x"}) }, `key "A-B"`},
		{"key with =", func() error { return c.UpdateVM(ctx, onegate.KV{Key: "A=B", Value: "x"}) }, "template attribute name"},
		{"digit first", func() error { return c.UpdateVM(ctx, onegate.KV{Key: "1A", Value: "x"}) }, "template attribute name"},
		{"duplicate key", func() error {
			return c.UpdateVM(ctx, onegate.KV{Key: "A", Value: "1"}, onegate.KV{Key: "A", Value: "2"})
		}, "given twice"},
		{"nothing to send", func() error { return c.UpdateVM(ctx) }, "no keys"},
		{"erase bad key", func() error { return c.EraseVMKey(ctx, "A B") }, "template attribute name"},
		{"negative id", func() error { _, err := c.GetVMByID(ctx, -1); return err }, "VM ID -1"},
		{"scale bad role", func() error { return c.ScaleRole(ctx, "a/b", 1) }, "bad role name"},
		{"scale negative", func() error { return c.ScaleRole(ctx, "worker", -1) }, "cardinality -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, onegate.ErrInvalid) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error = %v, want ErrInvalid with %q", err, tt.msg)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q leaks the value", err)
			}
			if onegate.IsRetryable(err) {
				t.Error("refused input classified retryable")
			}
		})
	}
	if n := len(rec.requests()); n != 0 {
		t.Errorf("%d requests sent for refused input", n)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	tok := vmcontext.NewSecret(testToken)
	tests := []struct {
		name string
		cfg  onegate.Config
		msg  string
	}{
		{"no scheme", onegate.Config{Endpoint: "gate:5030", Token: tok}, "not an http(s) URL"},
		{"ftp", onegate.Config{Endpoint: "ftp://gate", Token: tok}, "not an http(s) URL"},
		{"query", onegate.Config{Endpoint: "http://gate/?x=1", Token: tok}, "query"},
		{"negative VM", onegate.Config{Endpoint: "http://gate", VMID: -1, Token: tok}, "negative"},
		{"no token", onegate.Config{Endpoint: "http://gate"}, "empty token"},
		{"token with newline", onegate.Config{Endpoint: "http://gate", Token: vmcontext.NewSecret("abcd\nX-Evil: 1")}, "line break"},
		{"missing CA file", onegate.Config{Endpoint: "https://gate", Token: tok, CAFile: "/nonexistent/ca.pem"}, "reading CA file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := onegate.New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error = %v, want %q", err, tt.msg)
			}
			if strings.Contains(err.Error(), "abcd") || strings.Contains(err.Error(), testToken) {
				t.Errorf("error %q leaks the token", err)
			}
		})
	}
}

func TestClientTimeoutAndCancel(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)

	c := newClient(t, srv.URL, func(cfg *onegate.Config) { cfg.Timeout = 50 * time.Millisecond })
	_, err := c.GetVM(context.Background())
	if !errors.Is(err, onegate.ErrTimeout) || !onegate.IsRetryable(err) {
		t.Errorf("timeout: error = %v, want retryable ErrTimeout", err)
	}

	c = newClient(t, srv.URL, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err = c.GetVM(ctx)
	if !errors.Is(err, context.Canceled) || onegate.IsRetryable(err) {
		t.Errorf("cancel: error = %v, want final context.Canceled", err)
	}
}

func TestClientConnectionRefused(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	_, err = newClient(t, "http://"+addr, nil).GetVM(context.Background())
	if err == nil || !onegate.IsRetryable(err) {
		t.Errorf("error = %v, want retryable", err)
	}
	if strings.Contains(err.Error(), testToken) {
		t.Errorf("error %q leaks the token", err)
	}
}

func TestClientTLS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(&recorder{body: `{"VM":{"ID":"49"}}`})
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	if _, err := newClient(t, srv.URL, nil).GetVM(ctx); err == nil || onegate.IsRetryable(err) {
		t.Errorf("unknown CA: error = %v, want a final certificate error", err)
	}
	if _, err := newClient(t, srv.URL, func(c *onegate.Config) { c.CAFile = ca }).GetVM(ctx); err != nil {
		t.Errorf("custom CA: %v", err)
	}
	if _, err := newClient(t, srv.URL, func(c *onegate.Config) { c.CAPEM = certPEM }).GetVM(ctx); err != nil {
		t.Errorf("custom CA from memory: %v", err)
	}
	if _, err := onegate.New(onegate.Config{Endpoint: srv.URL, Token: vmcontext.NewSecret(testToken), CAPEM: []byte("junk")}); err == nil {
		t.Error("a CA bundle without certificates was accepted")
	}
	if _, err := newClient(t, srv.URL, func(c *onegate.Config) { c.InsecureSkipVerify = true }).GetVM(ctx); err != nil {
		t.Errorf("insecure: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.pem")
	_ = os.WriteFile(bad, []byte("not a certificate"), 0o600)
	if _, err := onegate.New(onegate.Config{Endpoint: srv.URL, Token: vmcontext.NewSecret(testToken), CAFile: bad}); err == nil {
		t.Error("a CA file without certificates was accepted")
	}
	// A caller-supplied client is used as is.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // test server
	if _, err := newClient(t, srv.URL, func(c *onegate.Config) { c.HTTPClient = hc }).GetVM(ctx); err != nil {
		t.Errorf("custom HTTPClient: %v", err)
	}
}

// TestClientNeverFollowsRedirects: a 302 or 307 (as a captive proxy or a
// hostile endpoint might send) must not carry X-ONEGATE-TOKEN, nor the body
// of a PUT holding the join token, to another host.
func TestClientNeverFollowsRedirects(t *testing.T) {
	t.Parallel()
	elsewhere := &recorder{body: `{"VM":{"ID":"49"}}`}
	other := httptest.NewServer(elsewhere)
	defer other.Close()
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.Path+"?secret=1", status)
		}))
		for name, c := range map[string]*onegate.Client{
			"built-in client": newClient(t, redirector.URL, nil),
			"caller's client": newClient(t, redirector.URL, func(c *onegate.Config) { c.HTTPClient = &http.Client{} }),
		} {
			_, gerr := c.GetVM(context.Background())
			perr := c.UpdateVM(context.Background(), onegate.KV{Key: "ONEGATE_K8S_TOKEN", Value: "abcdef.0123456789abcdef"})
			for _, err := range []error{gerr, perr} {
				var oe *onegate.Error
				if !errors.As(err, &oe) || oe.Status != status || onegate.IsRetryable(err) ||
					!strings.Contains(err.Error(), "not followed") || strings.Contains(err.Error(), "secret=1") {
					t.Errorf("%d, %s: error = %v", status, name, err)
				}
			}
		}
		redirector.Close()
	}
	if n := len(elsewhere.requests()); n != 0 {
		t.Errorf("the redirect target got %d requests: %+v", n, elsewhere.requests())
	}
}

// TestClientRefusesAnotherVM: GET /vm and GET /vms/:id must describe the
// VM asked for.
func TestClientRefusesAnotherVM(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&recorder{body: `{"VM":{"ID":"7","USER_TEMPLATE":{"READY":"YES"}}}`})
	defer srv.Close()
	c := newClient(t, srv.URL, nil)
	_, err := c.GetVM(context.Background())
	if !errors.Is(err, onegate.ErrWrongVM) || onegate.IsRetryable(err) || !strings.Contains(err.Error(), "answered with VM 7, want VM 49") {
		t.Errorf("GET /vm: %v", err)
	}
	if _, err := c.GetVMByID(context.Background(), 8); !errors.Is(err, onegate.ErrWrongVM) {
		t.Errorf("GET /vms/8: %v", err)
	}
}
