package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/onekube/onekube/flow/register/registertest"
)

// TestHostileServers: against servers that redirect, echo credentials,
// answer pages of megabytes or break the XML-RPC shape, every command ends
// in one line on stderr with exit 1, without the credentials, and nothing
// reaches a host the user did not name.
func TestHostileServers(t *testing.T) {
	t.Parallel()
	var stray atomic.Int32
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { stray.Add(1) }))
	t.Cleanup(evil.Close)
	handler := func(status int, body string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		})
	}
	redirect := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, evil.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "Unauthorized\nAuthorization: %s\n", r.Header.Get("Authorization"))
	})
	goodFlow := &registertest.OneFlow{Services: `{"DOCUMENT_POOL":{}}`, Pool: `{"DOCUMENT_POOL":{}}`,
		Service: map[int]string{12: statusService(1, 1)}}
	html := "<html><head><title>Gateway Timeout</title></head><body>" + strings.Repeat("<p>retry later</p>", 300000) + "</body></html>"
	short := `<?xml version="1.0"?><methodResponse><params><param><value><array><data><value><boolean>1</boolean></value></data></array></value></param></params></methodResponse>`
	cases := []struct {
		name       string
		flow, oned http.Handler
		args       []string
		want       string
	}{
		{"oned redirects", goodFlow, redirect, []string{"status", "12"}, "redirect refused: "},
		{"oneflow redirects", redirect, handler(200, ""), []string{"status", "12"}, "redirect refused: "},
		{"oneflow echoes auth", echo, handler(200, ""), []string{"status", "12"}, "401 Unauthorized: Unauthorized Authorization: Basic <redacted>"},
		{"oneflow 5 MB page", handler(504, html), handler(200, ""), []string{"status", "12"}, "504 Gateway Timeout: Gateway Timeout"},
		{"oned 5 MB page", goodFlow, handler(502, html), []string{"status", "12"}, "(HTTP 502 Bad Gateway): Gateway Timeout"},
		{"oned short array", goodFlow, handler(200, short), []string{"status", "12"}, "the result array has 1 values, oned sends at least 3"},
		{"create, oned redirects", goodFlow, redirect, []string{"create"}, "redirect refused"},
		{"create, oned short array", goodFlow, handler(200, short), []string{"create"}, "not an XML-RPC answer from oned"},
		{"create, oneflow echoes auth", echo, &registertest.Oned{}, []string{"create", "--master-template-id", "1", "--worker-template-id", "2"}, "Basic <redacted>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs, os := httptest.NewServer(tc.flow), httptest.NewServer(tc.oned)
			t.Cleanup(fs.Close)
			t.Cleanup(os.Close)
			env := map[string]string{"ONEFLOW_URL": fs.URL, "ONE_XMLRPC": os.URL + "/RPC2", "file:/home/u/.one/one_auth": "alice:s3cret-pw\n"}
			code, _, errs := runCLI(t, "", env, tc.args...)
			if code != exitFailed {
				t.Errorf("exit %d, want %d", code, exitFailed)
			}
			checkOneLine(t, withoutWarnings(errs), tc.want)
			for _, secret := range []string{"s3cret-pw", base64.StdEncoding.EncodeToString([]byte("alice:s3cret-pw"))} {
				if strings.Contains(errs, secret) {
					t.Errorf("credential on stderr: %s", errs)
				}
			}
		})
	}
	if n := stray.Load(); n != 0 {
		t.Errorf("the redirect target got %d requests", n)
	}
}

func checkOneLine(t *testing.T, stderr, want string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "onekube-flow: ") || len(stderr) > 600 {
		t.Errorf("stderr is not one short line (%d bytes): %q", len(stderr), stderr)
	}
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q: %s", want, stderr)
	}
}

// TestInputsBounded: a spec or template larger than the bounds is refused
// before it is parsed.
func TestInputsBounded(t *testing.T) {
	t.Parallel()
	huge := io.LimitReader(zeros{}, maxInput+10)
	if _, err := readLimited(huge, "stdin"); err == nil || !strings.Contains(err.Error(), "stdin is larger than 64 MiB") {
		t.Errorf("err = %v", err)
	}
	code, _, errs := runCLI(t, "apiVersion: onekube.io/v1alpha1\nkind: Cluster\n#"+strings.Repeat("x", 2<<20), nil, "render", "-f", "-")
	if code != exitFailed {
		t.Errorf("exit %d", code)
	}
	checkOneLine(t, errs, "bytes: a spec file has at most 1048576")
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
