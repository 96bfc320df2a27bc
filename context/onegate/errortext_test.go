package onegate

import (
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	vmcontext "github.com/onekube/onekube/context"
)

// debugToken is shaped like oned's token (base64 of an AES block), with a
// '/' that Rack's escape_html turns into "&#x2F;".
const debugToken = "yCxieDUS7kra/Vn9ILA0+g=="

// debugPage is the kind of page the 6.10.5 OneGate answers in Sinatra's
// development mode (its systemd unit sets no environment) to an unhandled
// error: ~124 KB of HTML whose rack env table echoes X-ONEGATE-TOKEN, raw
// and escaped, and may be cut anywhere.
func debugPage(token string) string {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html>\n<head>\n  <meta http-equiv=\"Content-Type\" content=\"text/html; charset=utf-8\"/>\n")
	b.WriteString("  <title>NoMethodError at /vms/3</title>\n")
	b.WriteString("  <style>/* token " + token + " */</style>\n</head>\n<body>\n")
	b.WriteString("<h2>undefined method `[]' for nil:NilClass</h2>\n")
	for b.Len() < 124<<10 {
		b.WriteString("<tr><td>HTTP_X_ONEGATE_TOKEN</td><td class=\"code\"><div>" + html.EscapeString(token) + "</div></td></tr>\n")
		b.WriteString("<tr><td>rack.escaped</td><td>" + strings.ReplaceAll(token, "/", "&#x2F;") + " " + url.QueryEscape(token) + "</td></tr>\n")
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// assertNoTokenPart fails when s holds the token or any 8-character part
// of it, raw, HTML-unescaped or percent-decoded.
func assertNoTokenPart(t testing.TB, what, s, token string) {
	t.Helper()
	if part := tokenPartIn(s, token); part != "" {
		t.Errorf("%s holds %q, part of the token: %.300q", what, part, s)
	}
}

func tokenPartIn(s, token string) string {
	forms := []string{s, html.UnescapeString(s)}
	if u, err := url.QueryUnescape(s); err == nil {
		forms = append(forms, u)
	}
	for i := 0; i+8 <= len(token); i++ {
		for _, f := range forms {
			if strings.Contains(f, token[i:i+8]) {
				return token[i : i+8]
			}
		}
	}
	return ""
}

// TestClientErrorBodyKeepsTheTokenOut: a non-2xx answer's body reaches the
// error text bounded, one line, and without the token or any part of it,
// whatever the server echoes; an HTML page is reduced to its title.
func TestClientErrorBodyKeepsTheTokenOut(t *testing.T) {
	t.Parallel()
	page := debugPage(debugToken)
	for name, c := range map[string]struct {
		ctype, body string
		want        string
	}{
		"sinatra debug page":            {"text/html;charset=utf-8", page, "NoMethodError at /vms/3"},
		"html, wrong type":              {"text/plain", page, "NoMethodError at /vms/3"},
		"html without title":            {"text/html", "<html><body>" + strings.Repeat("<p>"+debugToken+"</p>", 500), "HTML page"},
		"token cut at the read limit":   {"text/plain", strings.Repeat("x", maxErrorBody-12) + debugToken, ""},
		"token after a long first line": {"text/plain", "error: " + strings.Repeat("y ", 120) + debugToken[:14], "withheld"},
		"plain message":                 {"text/plain", "attribute not found\n", "attribute not found"},
		"escaped echo":                  {"text/plain", "bad token " + strings.ReplaceAll(debugToken, "/", "&#x2F;"), "withheld"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", c.ctype)
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(c.body))
		}))
		cl, err := New(Config{Endpoint: srv.URL, VMID: 8, Token: vmcontext.NewSecret(debugToken)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cl.GetVMByID(context.Background(), 3)
		srv.Close()
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		msg := err.Error()
		assertNoTokenPart(t, name, msg, debugToken)
		if len(msg) > 400 || strings.ContainsAny(msg, "\n\r") || !utf8.ValidString(msg) {
			t.Errorf("%s: %d bytes, not one bounded line: %q", name, len(msg), msg)
		}
		if !strings.Contains(msg, c.want) || !strings.Contains(msg, "500") {
			t.Errorf("%s: %q, want it to say %q", name, msg, c.want)
		}
	}
}

// FuzzErrorText: whatever a server answers, the text is one bounded,
// printable line without any 8-character part of the token.
func FuzzErrorText(f *testing.F) {
	f.Add("text/html", debugPage(debugToken)[:maxErrorBody], debugToken)
	f.Add("text/plain", "attribute not found", debugToken)
	f.Add("", "<title>a\n"+debugToken+"</title>", debugToken)
	f.Add("text/html; charset=\"", "<TITLE >&lt;x&gt;</TITLE>", "abcdefgh12345678")
	f.Add("text/plain", "\x1b[31m"+url.QueryEscape(debugToken)+"\xff", debugToken)
	f.Add("text/plain", "tok abc", "abc")
	f.Fuzz(func(t *testing.T, ctype, body, token string) {
		if len(body) > maxErrorBody {
			body = body[:maxErrorBody]
		}
		got := errorText(ctype, []byte(body), vmcontext.NewSecret(token))
		if len(got) > maxErrorText+len("...") || !utf8.ValidString(got) {
			t.Fatalf("%d bytes or invalid UTF-8: %q", len(got), got)
		}
		for _, r := range got {
			if !unicode.IsPrint(r) {
				t.Fatalf("unprintable %U in %q", r, got)
			}
		}
		if got == withheld {
			return
		}
		if len(token) >= 8 && echoes(got, token) {
			t.Fatalf("%q shows part of the token %q", got, token)
		}
		if len(token) >= 4 && token != vmcontext.Mask && strings.Contains(got, token) {
			t.Fatalf("%q shows the token %q", got, token)
		}
	})
}
