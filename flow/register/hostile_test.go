package register

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/OpenNebula/one/src/oca/go/src/goca"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow/register/registertest"
)

// rpcAnswer wraps values (XML-RPC <value>s) in oned's answer array.
func rpcAnswer(values ...string) string {
	return `<?xml version="1.0"?><methodResponse><params><param><value><array><data>` +
		strings.Join(values, "") + `</data></array></value></param></params></methodResponse>`
}

const (
	vTrue  = `<value><boolean>1</boolean></value>`
	vZero  = `<value><i4>0</i4></value>`
	vmDoc  = `<value><string>&lt;VM&gt;&lt;ID&gt;1&lt;/ID&gt;&lt;NAME&gt;m&lt;/NAME&gt;&lt;STATE&gt;3&lt;/STATE&gt;&lt;LCM_STATE&gt;3&lt;/LCM_STATE&gt;&lt;/VM&gt;</string></value>`
	tooFew = `<?xml version="1.0"?><methodResponse><params><param><value><array><data></data></array></value></param></params></methodResponse>`
)

// serve answers every request with status and body.
func serve(t *testing.T, status int, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestGocaPanicsUnguarded pins the panic the guard exists for: goca's
// CallContext indexes result[0..2] without a length check (client.go).
func TestGocaPanicsUnguarded(t *testing.T) {
	t.Parallel()
	srv := serve(t, 200, tooFew)
	ctrl := goca.NewController(goca.NewClient(goca.NewConfig("u", "p", srv.URL), srv.Client()))
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), "index out of range [0] with length 0") {
			t.Errorf("goca did not panic as pinned: %v", r)
		}
	}()
	_, _ = ctrl.VM(1).Info(false)
}

// TestOnedBadAnswers: every malformed or hostile answer is one short error
// line, never a panic, never the password.
func TestOnedBadAnswers(t *testing.T) {
	t.Parallel()
	deep := rpcAnswer(vTrue, strings.Repeat("<value><array><data>", 5000)+strings.Repeat("</data></array></value>", 5000), vZero)
	cases := []struct {
		name, body string
		status     int
		want       string
	}{
		{"empty array", tooFew, 200, "the result array has 0 values, oned sends at least 3"},
		{"one value", rpcAnswer(vTrue), 200, "the result array has 1 values"},
		{"two values", rpcAnswer(vTrue, vmDoc), 200, "the result array has 2 values"},
		{"first not boolean", rpcAnswer(vZero, vmDoc, vZero), 200, "result value 0 is i4, want a boolean"},
		{"third not int", rpcAnswer(vTrue, vmDoc, vmDoc), 200, "result value 2 is string, want an integer"},
		{"deep arrays", deep, 200, "more than 10 levels"},
		{"not xml", "garbage", 200, "text outside the root element: garbage"},
		{"no element", "  ", 200, "no XML element"},
		{"html 200", "<html><body>login</body></html>", 200, "want one <methodResponse>"},
		{"doctype", `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><methodResponse/>`, 200, "a <!DOCTYPE>"},
		{"two params", strings.Replace(rpcAnswer(vTrue, vmDoc, vZero), "</param>", "</param><param><value>x</value></param>", 1), 200, "want exactly one <param>"},
		{"bad gateway", "<html><head><title>502 Bad Gateway</title></head><body>" + strings.Repeat("x", 5<<20) + "</body></html>", 502, "(HTTP 502 Bad Gateway): 502 Bad Gateway"},
		{"password echoed", "request was: one.vm.info u:" + pass + " " + strings.Repeat("y", 190), 500, "request was: one.vm.info u:<redacted>"},
		{"redirect without location", "moved", 302, "not an XML-RPC answer from oned (HTTP 302 Found): moved"},
		{"bad vm document", rpcAnswer(vTrue, `<value><string>&lt;VM&gt;&lt;ID&gt;x</string></value>`, vZero), 200, "oned: reading VM 1: XML syntax error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, tc.status, tc.body)
			_, err := NewOnedVMs(srv.URL, "u", vmcontext.NewSecret(pass), srv.Client()).Info(context.Background(), 1)
			checkErrLine(t, err, tc.want)
		})
	}
}

// checkErrLine: err holds want, is one line of at most ~400 characters, and
// holds no credential.
func checkErrLine(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if !strings.Contains(msg, want) {
		t.Errorf("error %q lacks %q", msg, want)
	}
	if strings.ContainsAny(msg, "\n\r") || utf8.RuneCountInString(msg) > 400 || !utf8.ValidString(msg) {
		t.Errorf("not one short line (%d characters): %q", len(msg), msg)
	}
	for _, secret := range []string{pass, base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))} {
		if strings.Contains(msg, secret) {
			t.Errorf("credential in %q", msg)
		}
	}
}

// TestRedirectsRefused: neither client follows a redirect; the target
// never sees a request, so neither the XML-RPC body (user:password) nor
// the Authorization header leaves for it.
func TestRedirectsRefused(t *testing.T) {
	t.Parallel()
	for _, code := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			t.Parallel()
			var hits atomic.Int32
			evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				fmt.Fprint(w, rpcAnswer(vTrue, vmDoc, vZero))
			}))
			t.Cleanup(evil.Close)
			redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, evil.URL+"/RPC2", code)
			}))
			t.Cleanup(redirector.Close)
			hc := &http.Client{Timeout: 5 * time.Second}

			_, err := NewOnedVMs(redirector.URL+"/RPC2", user, vmcontext.NewSecret(pass), hc).Info(context.Background(), 1)
			checkErrLine(t, err, "redirect refused: "+redirector.URL+"/RPC2 points to "+evil.URL+"/RPC2")
			if !errors.Is(err, ErrRedirect) {
				t.Errorf("not ErrRedirect: %v", err)
			}
			fc := &FlowClient{BaseURL: redirector.URL, User: user, Password: vmcontext.NewSecret(pass), HTTP: hc}
			_, err = fc.List(context.Background())
			checkErrLine(t, err, "redirect refused")
			if !errors.Is(err, ErrRedirect) {
				t.Errorf("not ErrRedirect: %v", err)
			}
			if n := hits.Load(); n != 0 {
				t.Errorf("the redirect target got %d requests", n)
			}
		})
	}
}

// TestOneFlowErrorBodies: a 401 page echoing the Authorization header and a
// 5 MB HTML page both become a short excerpt without the credentials.
func TestOneFlowErrorBodies(t *testing.T) {
	t.Parallel()
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	cases := []struct {
		name, body string
		status     int
		want       string
	}{
		{"echo", "Unauthorized. Request headers: Authorization: " + auth + "\nAccept: application/json", 401,
			"oneflow: GET /service_template: 401 Unauthorized: Unauthorized. Request headers: Authorization: Basic <redacted> Accept: application/json"},
		{"echo bearer", "bad token: bearer abcdEFGH1234ijkl", 401, "bad token: bearer <redacted>"},
		{"raw password", "user " + user + " password " + pass + " refused", 401, "password <redacted> refused"},
		{"html", "<!DOCTYPE html><html><head><title>Proxy &amp; Error</title></head><body>" + strings.Repeat("<p>lorem ipsum</p>\n", 300000) + "</body></html>", 502,
			"oneflow: GET /service_template: 502 Bad Gateway: Proxy & Error"},
		{"html without title", "<html><body><h1>Service\nUnavailable</h1>" + strings.Repeat("<div>", 1<<20) + "</body></html>", 503, "503 Service Unavailable: Service Unavailable"},
		{"long text", strings.Repeat("error ", 1<<20), 500, "error error"},
		{"secret across the read bound", strings.Repeat("z", maxErrorBody-10) + pass + pass, 500, "zzz"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, tc.status, tc.body)
			fc := &FlowClient{BaseURL: srv.URL, User: user, Password: vmcontext.NewSecret(pass), HTTP: srv.Client()}
			_, err := fc.List(context.Background())
			checkErrLine(t, err, tc.want)
			if strings.Contains(err.Error(), pass[:6]) {
				t.Errorf("part of the password in %q", err)
			}
		})
	}
}

// TestAnswersBounded: an answer above MaxAnswer is refused, whether it
// announces its length or streams.
func TestAnswersBounded(t *testing.T) {
	t.Parallel()
	huge := rpcAnswer(vTrue, "<value><string>"+strings.Repeat("a", MaxAnswer)+"</string></value>", vZero)
	for _, chunked := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !chunked {
				w.Header().Set("Content-Length", fmt.Sprint(len(huge)))
			}
			_, _ = io.WriteString(w, huge)
		}))
		t.Cleanup(srv.Close)
		_, err := NewOnedVMs(srv.URL, user, vmcontext.NewSecret(pass), srv.Client()).Info(context.Background(), 1)
		checkErrLine(t, err, "answer too large")
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("chunked %v: %v", chunked, err)
		}
		fc := &FlowClient{BaseURL: srv.URL, User: user, Password: vmcontext.NewSecret(pass), HTTP: srv.Client()}
		_, err = fc.List(context.Background())
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("oneflow, chunked %v: %v", chunked, err)
		}
	}
}

// TestOnedGoodAnswers: the guard passes what oned really sends, faults
// included.
func TestOnedGoodAnswers(t *testing.T) {
	t.Parallel()
	o := &registertest.Oned{VMs: map[int]string{7: registertest.VMXML(registertest.VM{ID: 7, Name: "w", State: 3, LCM: 3})}}
	srv := httptest.NewServer(o)
	t.Cleanup(srv.Close)
	v, err := NewOnedVMs(srv.URL, user, vmcontext.NewSecret(pass), srv.Client()).Info(context.Background(), 7)
	if err != nil || v.ID != 7 {
		t.Fatalf("%v %v", v, err)
	}
	_, err = NewOnedVMs(srv.URL, user, vmcontext.NewSecret(pass), srv.Client()).Info(context.Background(), 8)
	checkErrLine(t, err, "oned: reading VM 8: OpenNebula error [SUCCESS]: [one.vm.info] Error getting virtual machine [8].")
	fault := `<?xml version="1.0"?><methodResponse><fault><value><struct><member><name>faultCode</name><value><int>-501</int></value></member>` +
		`<member><name>faultString</name><value><string>Parameter that is supposed to be integer is not</string></value></member></struct></value></fault></methodResponse>`
	fs := serve(t, 200, fault)
	_, err = NewOnedVMs(fs.URL, user, vmcontext.NewSecret(pass), fs.Client()).Info(context.Background(), 1)
	checkErrLine(t, err, "Fault(-501): Parameter that is supposed to be integer is not")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// FuzzOnedAnswer: whatever oned answers, reading a VM returns a VM or one
// line of error, and never panics (through the guard and goca).
func FuzzOnedAnswer(f *testing.F) {
	for _, s := range []string{
		rpcAnswer(vTrue, vmDoc, vZero), tooFew, rpcAnswer(vTrue), rpcAnswer(vTrue, vmDoc, vZero, vZero),
		rpcAnswer(`<value><boolean>0</boolean></value>`, `<value><string>denied</string></value>`, `<value><i4>256</i4></value>`),
		rpcAnswer(vTrue, `<value>bare</value>`, `<value><int>1</int></value>`),
		rpcAnswer(vTrue, `<value><string></string></value>`, vZero),
		`<methodResponse><fault><value><struct><member><name>faultCode</name><value><int>1</int></value></member></struct></value></fault></methodResponse>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Status: "200 OK", Body: io.NopCloser(bytes.NewReader(body)), Request: r, Header: http.Header{}}, nil
		})}
		v, err := NewOnedVMs("http://oned.invalid/RPC2", user, vmcontext.NewSecret(pass), hc).Info(context.Background(), 1)
		if err == nil && v == nil {
			t.Fatal("no VM and no error")
		}
		if err != nil && (strings.ContainsAny(err.Error(), "\n\r") || len(err.Error()) > 2*maxErrorLine) {
			t.Fatalf("error not one short line: %q", err)
		}
	})
}

// FuzzExcerpt: an excerpt is one printable line of at most maxExcerpt
// characters.
func FuzzExcerpt(f *testing.F) {
	for _, s := range []string{"", "plain", "<html><title>t</title></html>", "a\nb\tc\x00d", "\xff\xfe", "<body>" + strings.Repeat("é", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := excerpt(s)
		if strings.ContainsAny(e, "\n\r\t\x00") || !utf8.ValidString(e) || utf8.RuneCountInString(e) > maxExcerpt {
			t.Fatalf("excerpt %q", e)
		}
	})
}

func TestRedactAuth(t *testing.T) {
	t.Parallel()
	pw := vmcontext.NewSecret("pa55:word")
	b64 := base64.StdEncoding.EncodeToString([]byte("bob:pa55:word"))
	for _, tc := range []struct{ in, want string }{
		{"Authorization: Basic " + b64, "Authorization: Basic <redacted>"},
		{"bare " + b64 + " echoed", "bare <redacted> echoed"},
		{"login bob:pa55:word failed", "login bob:<redacted> failed"},
		{"authorization: bearer eyJhbGciOiJIUzI1NiJ9.e30.x", "authorization: bearer <redacted>"},
		{"Basic dXNlcjpvdGhlcg== from another client", "Basic <redacted> from another client"},
		{"basic requirements are not met", "basic requirements are not met"},
		{"Basic auth", "Basic auth"},
	} {
		if got := redactAuth(tc.in, "bob", pw); got != tc.want {
			t.Errorf("redactAuth(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
